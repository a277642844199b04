"""Teammates (owners only): who may sign in to the shop's console, with their roles."""

from flask import g

from shop.console import nav
from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import render
from shop.domain import teammates

nav.add(nav.NavItem("console.teammates", "Teammates", None, owner=True))


@bp.route("/teammates", methods=["GET"], endpoint="teammates")
@page(owner=True)
def teammates_page():
    """The shop's teammates: email, name, role, whether they can sign in (managed with `shop user`)."""
    return render(
        "console/teammates.html", section="console.teammates", rows=teammates.list_teammates(g.tenant.id)
    )

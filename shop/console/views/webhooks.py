"""Webhooks: subscriptions, a subscription's stats and deliveries, a delivery's attempts, and actions."""

from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import render


@bp.route("/webhooks", methods=["GET"])
@page("webhooks.read")
def webhooks():
    """The tenant's subscriptions."""
    return render("console/webhooks.html", subscriptions=[])


@bp.route("/webhooks/<sub_id>", methods=["GET"])
@page("webhooks.read")
def webhook(sub_id: str):
    """One subscription."""
    return render("console/webhooks.html", subscriptions=[])


@bp.route("/webhooks/<sub_id>/deliveries/<delivery_id>", methods=["GET"])
@page("webhooks.read")
def delivery(sub_id: str, delivery_id: str):
    """One delivery."""
    return render("console/webhooks.html", subscriptions=[])

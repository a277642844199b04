"""API keys (owners only): the shop's keys, make one (its token shown once), revoke one."""

from flask import g, redirect, request, url_for

from shop.console import forms, nav
from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import query_value, render
from shop.domain import keys
from shop.platform.errors import ApiError

nav.add(nav.NavItem("console.keys", "API keys", None, owner=True))

DONE = {"revoked": "Revoked: that key answers 401 in the API from now on."}
FIELDS = ("mode", "scopes")


@bp.route("/keys", methods=["GET", "POST"], endpoint="keys")
@page(owner=True)
def keys_page():
    """The shop's keys and the form to make one; a made key's token is shown on the answer, once."""
    errors: dict[str, str] = {}
    if request.method == "POST":
        mode = forms.gather(errors, lambda: forms.one_of("mode", keys.MODES, "test"))
        scopes = forms.gather(errors, lambda: _scopes())
        if not errors:
            created, token = keys.create_key(g.tenant.id, scopes, mode=mode)
            return render(
                "console/key_made.html",
                section="console.keys",
                made=keys.describe_key(created, True),
                token=token,
            )
    return render(
        "console/keys.html",
        400 if errors else 200,
        section="console.keys",
        rows=keys.list_keys(g.tenant.id, with_prefix=True),
        scopes=keys.SCOPES,
        modes=keys.MODES,
        errors=errors,
        chosen=request.form.getlist("scopes") if errors else [],
        chosen_mode=(request.form.get("mode") if errors else None) or "test",
        notice=DONE.get(query_value("done", 20) or ""),
    )


def _scopes() -> list[str]:
    """The checked scopes: at least one (a key without any scope is refused by every resource)."""
    chosen = forms.choices("scopes", keys.SCOPES)
    if not chosen:
        raise ApiError(400, "invalid_field", "scopes: choose at least one scope.", param="scopes")
    return chosen


@bp.route("/keys/<key_id>/revoke", methods=["GET", "POST"], endpoint="key_revoke")
@page(owner=True)
def key_revoke(key_id: str):
    """Revoke one of the shop's keys: a GET asks to confirm, the POST revokes it."""
    key = keys.tenant_key(g.tenant.id, key_id)
    if request.method == "POST":
        keys.revoke_key(key.id, tenant_id=g.tenant.id)
        return redirect(url_for("console.keys", done="revoked"), 303)
    return render("console/key_revoke.html", section="console.keys", row=keys.describe_key(key, True))

"""Teammates (owners only): who may sign in to the shop's console; add one (a generated password
shown once), change a role, disable one (their sessions end). The same domain functions as `shop user`."""

from flask import g, redirect, request, url_for

from shop.console import forms, nav, sessions
from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import query_value, render
from shop.domain import teammates
from shop.models.tenancy import ROLES
from shop.platform.errors import ApiError
from shop.platform.ids import parse_id

nav.add(nav.NavItem("console.teammates", "Teammates", None, owner=True))

DONE = {
    "role": "Role changed: it is in force from the teammate's next page.",
    "disabled": "Disabled: that teammate is signed out and can no longer sign in.",
}
# the add form's fields (a refusal of any other name is shown above the form)
FIELDS = ("email", "name", "role")


@bp.route("/teammates", methods=["GET", "POST"], endpoint="teammates")
@page(owner=True)
def teammates_page():
    """The shop's teammates and the add form; an added teammate's password is shown on the answer, once."""
    errors: dict[str, str] = {}
    status = 200
    if request.method == "POST":
        email = forms.gather(errors, lambda: teammates.check_email(forms.text("email", teammates.EMAIL_MAX)))
        name = forms.gather(
            errors, lambda: teammates.check_name(forms.text("name", teammates.NAME_MAX, required=False))
        )
        role = forms.gather(errors, lambda: forms.one_of("role", ROLES, "staff"))
        if not errors:
            try:
                added, password = teammates.create_teammate(g.tenant.id, email, name, role)
                return render(
                    "console/teammate_added.html", section="console.teammates", user=added, password=password
                )
            except ApiError as error:
                errors = _beside_field(error)
        status = _status_of(errors)
    return _page(errors, status)


@bp.route("/teammates/<user_id>/role", methods=["POST"], endpoint="teammate_role")
@page(owner=True)
def teammate_role(user_id: str):
    """Make a teammate an owner or staff; the shop's last active owner is kept an owner."""
    user = teammates.teammate_by_id(g.tenant.id, parse_id(user_id, "user_id"))
    errors: dict[str, str] = {}
    role = forms.gather(errors, lambda: forms.one_of("role", ROLES, user.role))
    if not errors:
        try:
            teammates.set_role(g.tenant.id, user.email, role, keep_an_owner=True)
        except ApiError as error:
            errors = _beside_field(error)
    if errors:
        message = errors.get("role") or next(iter(errors.values()))
        return _page({f"role-{user.id}": message}, _status_of(errors))
    if user.id == g.teammate.user_id and role != "owner":
        return redirect(url_for("console.overview"), 303)  # no longer an owner: this page is closed to them
    return redirect(url_for("console.teammates", done="role"), 303)


@bp.route("/teammates/<user_id>/disable", methods=["GET", "POST"], endpoint="teammate_disable")
@page(owner=True)
def teammate_disable(user_id: str):
    """Disable a teammate: a GET asks to confirm, the POST disables them and ends their sessions."""
    user = teammates.teammate_by_id(g.tenant.id, parse_id(user_id, "user_id"))
    if request.method == "POST":
        teammates.disable_teammate(g.tenant.id, user.email, keep_an_owner=True)
        if user.id == g.teammate.user_id:  # an owner who disabled themself is signed out with the rest
            response = redirect(url_for("console.sign_in", reason="account_ended"), 303)
            response.delete_cookie(sessions.COOKIE, path=url_for("console.overview"))
            return response
        return redirect(url_for("console.teammates", done="disabled"), 303)
    return render("console/teammate_disable.html", section="console.teammates", user=user)


def _beside_field(error: ApiError) -> dict:
    """A refusal of the domain (a bad field 400, a taken email or the last owner 409) as {field: message}."""
    if error.status not in (400, 409):
        raise error
    return {error.param or "form": error.message, "conflict": error.status == 409}


def _status_of(errors: dict) -> int:
    """400 for bad fields, 409 for a conflict (the flag is taken out: it is no field)."""
    if not errors:
        return 200
    return 409 if errors.pop("conflict", False) else 400


def _page(errors: dict, status: int):
    """The list with its role forms and the add form, each refusal beside its field."""
    rows = teammates.list_teammates(g.tenant.id)
    return render(
        "console/teammates.html",
        status,
        section="console.teammates",
        rows=rows,
        roles=ROLES,
        role_options=[(role, role) for role in ROLES],
        errors=errors,
        shown=(*FIELDS, *(f"role-{user.id}" for user in rows)),
        values=request.form if errors and request.endpoint == "console.teammates" else {},
        me=g.teammate.user_id,
        notice=DONE.get(query_value("done", 20) or ""),
    )

"""Sign-in (a teammate's email and password, or an integrator's API key), sign-out, the console's
own assets, and the 404 page for unknown paths."""

import hmac
import secrets
from datetime import timedelta
from pathlib import Path

from flask import abort, current_app, g, make_response, redirect, request, send_file, url_for

from shop.console import forms, sessions
from shop.console.blueprint import bp
from shop.console.guard import CSRF_FIELD, page, safe_next
from shop.console.pages import render
from shop.domain import teammates
from shop.platform import auth
from shop.platform.errors import ApiError

ASSETS_DIR = Path(__file__).resolve().parents[2] / "assets"
ASSETS = {"console.css": ASSETS_DIR / "console.css", "console.js": ASSETS_DIR / "console.js"}
SIGN_IN_COOKIE = "shop_console_sign_in"  # the sign-in form's CSRF token, before any session exists
REASONS = {
    "signed_out": "Sign in to continue.",
    "key_ended": "The API key of your session was revoked or has expired; sign in with a live key.",
    "bye": "You are signed out.",
    "account_ended": "Your account was disabled or its password changed; sign in again.",
}


def _set_cookie(response, name: str, value: str, path: str) -> None:
    response.set_cookie(name, value, httponly=True, samesite="Strict", secure=request.is_secure, path=path)


@bp.route("/sign-in", methods=["GET"])
@page(public=True)
def sign_in():
    """The sign-in forms (teammate, API key), with a fresh CSRF token in a cookie and in the forms."""
    notice = REASONS.get(request.args.get("reason", ""))
    return _sign_in_page(200, notice=notice)


def _sign_in_page(status: int, notice: str | None = None, errors: dict | None = None, email: str = ""):
    """The sign-in page (again, with each field's error beside it) and a fresh sign-in CSRF cookie."""
    token = secrets.token_urlsafe(32)
    after = safe_next(request.values.get("next"))
    html, status = render(
        "console/sign_in.html",
        status,
        sign_in_token=token,
        notice=notice,
        next=after,
        errors=errors or {},
        email=email,
        shop_id=request.form.get("shop", "")[:64],
    )
    response = make_response(html, status)
    _set_cookie(response, SIGN_IN_COOKIE, token, url_for("console.sign_in"))
    return response


@bp.route("/sign-in", methods=["POST"])
@page(public=True)
def sign_in_post():
    """A teammate's email and password, or an API key checked exactly as the API does (failures
    count per address, and per account for a teammate); then a fresh session."""
    sent, expected = request.form.get(CSRF_FIELD, ""), request.cookies.get(SIGN_IN_COOKIE, "")
    if not expected or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise ApiError(403, "csrf_failed", "This sign-in form is out of date; reload the page and try again.")
    auth.refuse_blocked_address()
    if "api_key" in request.form:
        return _key_sign_in()
    return _teammate_sign_in()


def _key_sign_in():
    key = auth.find_key(forms.text("api_key", 200))
    if key is None:
        auth.record_failure()
        raise ApiError(401, "unauthorized", "That API key is not valid (unknown, revoked or expired).")
    auth.admit(key, None)
    return _signed_in(key.tenant_id, key=key)


def _teammate_sign_in():
    try:
        email = forms.text("email", 320)
        password = _password()
        shop_id = forms.text("shop", 64, required=False)
        _no_control_characters(email=email, shop=shop_id)
    except ApiError as error:
        return _sign_in_page(
            400, errors={error.param: error.message.split(": ", 1)[-1]}, email=_typed_email()
        )
    config = current_app.config
    limit = teammates.SignInLimit(
        int(config["SIGN_IN_FAILURES_PER_ACCOUNT"]),
        timedelta(seconds=float(config["SIGN_IN_WINDOW_SECONDS"])),
    )
    try:
        user = teammates.verify_sign_in(email, password, limit, shop_id)
    except ApiError as error:
        if error.status != 400:
            raise
        return _sign_in_page(400, errors={error.param: error.message}, email=email)
    if user is None:
        auth.record_failure()
        wrong = "That email and password do not match an active teammate."
        return _sign_in_page(401, errors={"password": wrong}, email=email)
    teammate = teammates.live_teammate(user.id)
    auth.check_tenant(teammate.tenant)
    g.teammate = g.principal = teammate
    return _signed_in(user.tenant_id, user_id=user.id)


def _no_control_characters(**values) -> None:
    """Emails and shop ids never hold control characters (nor may a NUL reach a query)."""
    for name, value in values.items():
        if value and any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise ApiError(400, "invalid_field", f"{name}: remove the control characters.", param=name)


def _password() -> str:
    """The password as typed (not stripped: spaces may be part of it), sent once, bounded."""
    values = request.form.getlist("password")
    if len(values) != 1 or not values[0]:
        raise ApiError(400, "invalid_field", "password: type your password.", param="password")
    if len(values[0]) > teammates.PASSWORD_MAX or "\x00" in values[0]:
        raise ApiError(400, "invalid_field", "password: not a password of ours.", param="password")
    return values[0]


def _typed_email() -> str:
    values = request.form.getlist("email")
    return values[0][:320] if len(values) == 1 else ""


def _signed_in(tenant_id: str, key=None, user_id: int | None = None):
    """A new session (the browser's old one, if any, ends: the id rotates at every sign-in)."""
    old = request.cookies.get(sessions.COOKIE)
    cookie, g.console_session = sessions.start(tenant_id, key=key, user_id=user_id, replacing=old)
    response = redirect(safe_next(request.form.get("next")), 303)
    _set_cookie(response, sessions.COOKIE, cookie, url_for("console.overview"))
    response.delete_cookie(SIGN_IN_COOKIE, path=url_for("console.sign_in"))
    return response


@bp.route("/sign-out", methods=["POST"])
@page()
def sign_out():
    """End the session (the key itself stays as it is)."""
    sessions.end(g.console_session)
    response = redirect(url_for("console.sign_in", reason="bye"), 303)
    response.delete_cookie(sessions.COOKIE, path=url_for("console.overview"))
    return response


@bp.route("/assets/<name>", methods=["GET"])
@page(public=True)
def asset(name: str):
    """The console's own style sheet and script (nothing from elsewhere)."""
    path = ASSETS.get(name)
    if path is None:
        abort(404)
    response = send_file(path, max_age=3600)
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response


@bp.route("/<path:rest>", methods=["GET", "POST"])
@page(public=True)
def unknown(rest: str):
    """Any other path under /console/: the console's 404 page, not the API's JSON."""
    abort(404)

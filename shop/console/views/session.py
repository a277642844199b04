"""Sign-in with an API key, sign-out, the console's own assets, and the 404 page for unknown paths."""

import hmac
import secrets
from pathlib import Path

from flask import abort, g, make_response, redirect, request, send_file, url_for

from shop.console import forms, sessions
from shop.console.blueprint import bp
from shop.console.guard import CSRF_FIELD, page, safe_next
from shop.console.pages import render
from shop.platform import auth
from shop.platform.errors import ApiError

ASSETS_DIR = Path(__file__).resolve().parents[2] / "assets"
ASSETS = {"console.css": ASSETS_DIR / "console.css", "console.js": ASSETS_DIR / "console.js"}
SIGN_IN_COOKIE = "shop_console_sign_in"  # the sign-in form's CSRF token, before any session exists
REASONS = {
    "signed_out": "Sign in to continue.",
    "key_ended": "The API key of your session was revoked or has expired; sign in with a live key.",
    "bye": "You are signed out.",
}


def _set_cookie(response, name: str, value: str, path: str) -> None:
    response.set_cookie(name, value, httponly=True, samesite="Strict", secure=request.is_secure, path=path)


@bp.route("/sign-in", methods=["GET"])
@page(public=True)
def sign_in():
    """The sign-in form, with a fresh CSRF token in a cookie and in the form."""
    token = secrets.token_urlsafe(32)
    notice, after = REASONS.get(request.args.get("reason", "")), safe_next(request.args.get("next"))
    html, status = render("console/sign_in.html", sign_in_token=token, notice=notice, next=after)
    response = make_response(html, status)
    _set_cookie(response, SIGN_IN_COOKIE, token, url_for("console.sign_in"))
    return response


@bp.route("/sign-in", methods=["POST"])
@page(public=True)
def sign_in_post():
    """Check the key exactly as the API does (failures count per address), then start a session."""
    sent, expected = request.form.get(CSRF_FIELD, ""), request.cookies.get(SIGN_IN_COOKIE, "")
    if not expected or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise ApiError(403, "csrf_failed", "This sign-in form is out of date; reload the page and try again.")
    auth.refuse_blocked_address()
    key = auth.find_key(forms.text("api_key", 200))
    if key is None:
        auth.record_failure()
        raise ApiError(401, "unauthorized", "That API key is not valid (unknown, revoked or expired).")
    auth.admit(key, None)
    cookie, g.console_session = sessions.start(key)
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

"""Every console request: its session, the key's gates (the API's own), CSRF on POST, the page's scope."""

from urllib.parse import quote

from flask import g, redirect, request, url_for

from shop.console import sessions
from shop.platform import auth
from shop.platform.errors import ApiError

CSRF_FIELD = "csrf_token"


def page(scope: str | None = None, public: bool = False):
    """Declare what a console view needs: a key scope (None: any signed-in key), or no session at all."""

    def decorator(func):
        func._console_scope, func._console_public = scope, public
        return func

    return decorator


def check_request():
    """before_request of the console: sign-in state, then the same gates an API call passes."""
    view = g.get("view")
    g.console_session = None
    if view is None or getattr(view, "_console_public", False):
        return None
    record = sessions.find(request.cookies.get(sessions.COOKIE))
    if record is None:
        return _to_sign_in("signed_out")
    key = auth.live_key_by_id(record.api_key_id)
    if key is None:  # revoked or expired since sign-in: the session ends with it
        sessions.end(record)
        return _to_sign_in("key_ended")
    g.console_session = record
    auth.admit(key, None)
    if request.method == "POST" and not sessions.csrf_matches(record, request.form.get(CSRF_FIELD)):
        raise ApiError(403, "csrf_failed", "This form is out of date or was not sent from the console.")
    auth.check_scope(key, getattr(view, "_console_scope", None))
    return None


def _to_sign_in(reason: str):
    """A page asked for without a session: GET goes to the sign-in form, a POST is refused."""
    if request.method != "GET":
        raise ApiError(401, "signed_out", "You are signed out; sign in again and repeat the action.")
    target = url_for("console.sign_in", reason=reason)
    if request.path != url_for("console.overview"):
        target += "&next=" + quote(request.path, safe="/")
    return redirect(target, 303)


def safe_next(value: str | None) -> str:
    """Where to go after sign-in: a console path only (never another site)."""
    home = url_for("console.overview")
    if not value or not value.startswith(home) or "//" in value or "\\" in value or len(value) > 500:
        return home
    return value

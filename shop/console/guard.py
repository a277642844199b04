"""Every console request: its session, the key's gates (the API's own), CSRF on POST, the page's scope."""

from urllib.parse import quote

from flask import current_app, g, redirect, request, url_for

from shop.console import sessions
from shop.domain import actor, teammates
from shop.platform import auth, ratelimit
from shop.platform.errors import ApiError

CSRF_FIELD = "csrf_token"


def page(scope: str | None = None, public: bool = False, owner: bool = False):
    """Declare what a console view needs: a key scope (None: any signed-in key or teammate), the
    owner role (a teammate's; an API key passes on its scope), or no session at all."""

    def decorator(func):
        func._console_scope, func._console_public, func._console_owner = scope, public, owner
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
    if record.user_id is not None:
        principal = teammates.live_teammate(record.user_id)
        if principal is None or principal.tenant.id != record.tenant_id:  # disabled since sign-in
            sessions.end(record)
            return _to_sign_in("account_ended")
        g.console_session = record
        _admit_teammate(principal)
    else:
        principal = auth.live_key_by_id(record.api_key_id)
        if principal is None:  # revoked or expired since sign-in: the session ends with it
            sessions.end(record)
            return _to_sign_in("key_ended")
        g.console_session, g.principal, g.actor = record, principal, actor.api_key(principal.id)
        auth.admit(principal, None)
    if request.method == "POST" and not sessions.csrf_matches(record, request.form.get(CSRF_FIELD)):
        raise ApiError(403, "csrf_failed", "This form is out of date or was not sent from the console.")
    _check_role(view, principal)
    auth.check_scope(principal, getattr(view, "_console_scope", None))
    return None


def _admit_teammate(mate: teammates.Teammate) -> None:
    """A teammate's gates: a rate-limit bucket of its own (as a key has), the tenant's gates. Its
    requests are not in the usage log, which is the API keys' (GET /usage)."""
    g.principal, g.teammate, g.tenant = mate, mate, mate.tenant
    g.actor = actor.teammate(mate.email, "dashboard")
    config = current_app.config
    taken = ratelimit.take(mate.id, int(config["RATE_LIMIT_CAPACITY"]), float(config["RATE_LIMIT_REFILL"]))
    g.rate_headers = taken.headers()
    if not taken.granted:
        raise ApiError(429, "rate_limited", "Too many requests from this account; retry later.")
    auth.check_tenant(mate.tenant)


def _check_role(view, principal) -> None:
    """The owners' pages: a staff teammate is refused them (webhooks by their scopes; keys, settings
    and teammates pages are declared owner-only, and refused to an API key too, which has no role)."""
    is_teammate = isinstance(principal, teammates.Teammate)
    if is_teammate and principal.is_owner:
        return
    owner_page = getattr(view, "_console_owner", False)
    if owner_page or (is_teammate and getattr(view, "_console_scope", None) in teammates.OWNER_SCOPES):
        raise ApiError(403, "owner_only", "Only the shop's owners may open this page.")


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

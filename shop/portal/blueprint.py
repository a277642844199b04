"""The customer pages' blueprint: a rate limit per client address, HTML error pages, strict headers."""

import hashlib
from pathlib import Path

from flask import Blueprint, abort, current_app, render_template, request, send_file
from werkzeug.exceptions import HTTPException

from shop.console.pages import POLICY, TITLES
from shop.platform import errors, ratelimit
from shop.platform.auth import client_address
from shop.platform.errors import ApiError
from shop.portal import forms

bp = Blueprint("portal", __name__)
STYLESHEET = Path(__file__).resolve().parents[1] / "assets" / "portal.css"
HTTP_MESSAGES = {
    400: "The form could not be read.",
    404: "There is no such page here.",
    405: "This page does not take that kind of request.",
    413: "The form sent was too large.",
}


def public(func):
    """A customer page: no API key (the API's authentication skips it)."""
    func._public = True
    return func


@bp.before_request
def limit_per_address():
    """Every customer request takes a token from its address's bucket (a bot hammering the page
    gets the 429 page, a person never notices)."""
    config = current_app.config
    address = hashlib.sha256(client_address().encode()).hexdigest()[:40]
    taken = ratelimit.take(
        "book_" + address, int(config["BOOKING_RATE_CAPACITY"]), float(config["BOOKING_RATE_REFILL"])
    )
    if not taken.granted:
        retry = max(1, int(1 / max(float(config["BOOKING_RATE_REFILL"]), 0.001)))
        raise ApiError(
            429,
            "rate_limited",
            "Too many requests from your address; wait a moment and try again.",
            headers={"Retry-After": str(retry)},
        )


@bp.before_request
def check_forms():
    """Every customer form's CSRF token, before its page looks anything up (one place: a new form
    cannot forget it)."""
    if request.method == "POST":
        forms.check_csrf()


@bp.after_request
def secure_headers(response):
    """The console's strict policy; pages are never cached (they show places left and holds)."""
    response.headers["Content-Security-Policy"] = POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def error_page(status: int, code: str, message: str, headers: dict | None = None):
    """A refusal as a page a customer can read: what happened, never a traceback."""
    html = render_template(
        "portal/error.html", title=TITLES.get(status, "Something went wrong"), message=message, code=code
    )
    return html, status, headers or {}


@bp.errorhandler(ApiError)
def handle_api_error(error: ApiError):
    headers = {k: v for k, v in error.headers.items() if k == "Retry-After"}
    return error_page(error.status, error.code, error.message, headers)


@bp.errorhandler(HTTPException)
def handle_http_exception(error: HTTPException):
    status = error.code or 500
    if status >= 500:
        return handle_unexpected(error)
    code = errors.HTTP_CODES.get(status, ("invalid_request", ""))[0]
    return error_page(status, code, HTTP_MESSAGES.get(status, error.description or error.name))


@bp.errorhandler(Exception)
def handle_unexpected(error: Exception):
    """A bug: logged with its traceback by the API's handler, shown as a short page."""
    errors.handle_unexpected(error)
    return error_page(500, "internal_error", "Something went wrong on our side; please try again later.")


@bp.route("/portal/assets/portal.css", methods=["GET"])
@public
def stylesheet():
    """The customer pages' one stylesheet."""
    response = send_file(STYLESHEET, max_age=3600)
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response


@bp.route("/book/<path:rest>", methods=["GET", "POST"])
@bp.route("/portal/<path:rest>", methods=["GET", "POST"])
@public
def unknown(rest: str):
    """Any other path under /book/ or /portal/: the customer pages' 404, not the API's JSON."""
    abort(404)

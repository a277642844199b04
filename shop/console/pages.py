"""Rendering console pages: the shared context, error pages, notices and security headers."""

from flask import g, render_template, request, url_for
from werkzeug.exceptions import HTTPException

from shop.console import nav
from shop.platform import errors
from shop.platform.errors import ApiError

# every page: only our own files, no inline script or style, no framing, forms post here only
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
TITLES = {
    400: "That request was not valid",
    401: "Please sign in",
    402: "The account needs attention",
    403: "Not allowed",
    404: "Not found",
    405: "Not allowed here",
    409: "That clashes with something in progress",
    413: "Too much data",
    422: "That cannot be done now",
    429: "Too many requests",
    503: "Unavailable",
    504: "That took too long",
}
# what a plain HTTP error (routing, body size, form parsing) says on a page
HTTP_MESSAGES = {
    400: "The form could not be read.",
    404: "There is no such page in the console.",
    405: "This page does not take that kind of request.",
    413: "The form sent was too large.",
}


def render(template: str, status: int = 200, section: str | None = None, **context):
    """A console page with the signed-in key's navigation (`section`: the nav entry it is under)."""
    key = g.get("principal") if g.get("console_session") else None
    html = render_template(
        template,
        section=section or request.endpoint,
        key=key,
        teammate=g.get("teammate") if key else None,
        nav_items=nav.visible(key),
        csrf_token=g.console_session.csrf_token if g.get("console_session") else None,
        **context,
    )
    return html, status


def error_page(status: int, code: str, message: str, headers: dict | None = None):
    """The friendly page of a refusal: what went wrong and where to go next, never a traceback."""
    back = request.referrer if _same_site(request.referrer) else None
    html, status = render(
        "console/error.html",
        status,
        title=TITLES.get(status, "Something went wrong"),
        code=code,
        message=message,
        back=back,
        sign_in=url_for("console.sign_in") if status == 401 else None,
    )
    return html, status, headers or {}


def _same_site(url: str | None) -> bool:
    return bool(url) and url.startswith(request.host_url + "console/")


def handle_api_error(error: ApiError):
    """A domain or gate refusal (the API's ApiError) as a page with the same status and message."""
    headers = {k: v for k, v in error.headers.items() if k == "Retry-After"}
    return error_page(error.status, error.code, error.message, headers)


def handle_http_exception(error: HTTPException):
    """werkzeug's errors (unknown page, wrong method, body too large) as a page."""
    status = error.code or 500
    if status >= 500:
        return handle_unexpected(error)
    code = errors.HTTP_CODES.get(status, ("invalid_request", ""))[0]
    return error_page(status, code, HTTP_MESSAGES.get(status, error.description or error.name))


def handle_unexpected(error: Exception):
    """A bug: logged with its traceback by the API's handler, shown as a short page."""
    errors.handle_unexpected(error)
    return error_page(500, "internal_error", "Something went wrong on our side; it has been logged.")


def secure_headers(response):
    """after_request of the console: the strict policy, no caching of pages that show data."""
    response.headers["Content-Security-Policy"] = POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def query_value(name: str, max_length: int, allowed: tuple[str, ...] | None = None) -> str | None:
    """One query-string value (a filter, a cursor), bounded; a repeated or unknown one is a 400 page."""
    values = request.args.getlist(name)
    if not values or values == [""]:
        return None
    if len(values) > 1 or len(values[0]) > max_length or (allowed and values[0] not in allowed):
        expected = (
            f"one of {', '.join(allowed)}" if allowed else f"one value of at most {max_length} characters"
        )
        raise ApiError(400, "invalid_field", f"{name}: {expected}.", param=name)
    return values[0]

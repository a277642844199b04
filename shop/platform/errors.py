"""The spec's error body: one builder for every non-2xx response, and the handlers that use it."""

import logging
import sqlite3
import traceback

from flask import current_app, g, jsonify, request
from werkzeug.exceptions import HTTPException

from shop.platform.redaction import redact

log = logging.getLogger("shop.errors")

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "payment_required_error",
    403: "permission_error",
    404: "not_found_error",
    405: "method_not_allowed_error",
    408: "request_timeout_error",
    409: "conflict_error",
    410: "gone_error",
    413: "invalid_request_error",
    415: "unsupported_media_type_error",
    422: "unprocessable_error",
    429: "rate_limit_error",
    500: "api_error",
    503: "service_unavailable_error",
    504: "request_timeout_error",
}

# werkzeug's own exceptions (routing, body size, bad requests) mapped onto the spec's codes
HTTP_CODES = {
    400: ("invalid_json", "The request body could not be parsed."),
    404: ("not_found", "No such route."),
    405: ("method_not_allowed", "This method is not allowed on this route."),
    408: ("request_timeout", "The request timed out; retry with an Idempotency-Key."),
    410: ("gone", "This resource is gone."),
    413: ("payload_too_large", "The request body is too large."),
    415: ("unsupported_media_type", "Write requests must be sent as application/json."),
}


class ApiError(Exception):
    """A failure with the spec's status, code, message, param and details."""

    def __init__(self, status, code, message, param=None, details=None, headers=None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.param = param
        self.details = details
        self.headers = headers or {}


def not_found(kind: str, record_id, param: str | None = "id") -> ApiError:
    """404 for a record that is missing, another tenant's or hidden from the public surface: the
    message is `No <kind> <id>.` whichever it is, and `param` names what the request named it by
    (`id` for the path's record, else the path parameter or body field)."""
    # an id the request made up has no length limit in a path: echo no more than any id of ours needs
    return ApiError(404, "not_found", f"No {kind} {str(record_id)[:60]}.", param=param)


def error_response(status, code, message, param=None, details=None, headers=None):
    """The one builder of the spec's error body."""
    body = {
        "error": {
            "type": ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error"),
            "code": code,
            "message": message,
            "param": param,
            "details": details,
            "request_id": g.get("request_id"),
        }
    }
    response = jsonify(body)
    response.status_code = status
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def handle_api_error(error: ApiError):
    return error_response(error.status, error.code, error.message, error.param, error.details, error.headers)


def handle_http_exception(error: HTTPException):
    """werkzeug and flask-smorest exceptions as the spec's error body."""
    status = error.code or 500
    if status >= 500:
        return handle_unexpected(error)
    code, message = HTTP_CODES.get(status, ("invalid_request", error.description or error.name))
    headers = {}
    if status == 405 and getattr(error, "valid_methods", None):
        methods = literal_route_methods(request.path) or error.valid_methods
        headers["Allow"] = ", ".join(sorted(set(methods) - {"OPTIONS"}))
    return error_response(status, code, message, headers=headers)


def literal_route_methods(path: str) -> frozenset | None:
    """The methods of the route written exactly as this path, if there is one.

    `/messages/send` also matches `/messages/<message_id>`: its methods are the literal route's
    alone, not a GET that would read "send" as an id.
    """
    table = current_app.extensions.get("shop.literal_routes")
    if table is None:
        rules = current_app.url_map.iter_rules()
        table = {rule.rule: frozenset(rule.methods) for rule in rules if not rule.arguments}
        current_app.extensions["shop.literal_routes"] = table
    return table.get(path)


def service_unavailable(
    message: str = "The database is unavailable; retry with exponential backoff.", details=None
):
    """503 service_unavailable with Retry-After: a dependency cannot answer now; a retry may."""
    from shop.db import RETRY_AFTER_SECONDS

    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    return error_response(503, "service_unavailable", message, details=details, headers=headers)


def handle_database_error(error: Exception):
    """A database that cannot be reached or cannot take the write now is a 503, not a bug; the
    connection it broke on is dropped, so the next request of this thread opens a new one."""
    from shop.db import unavailable

    if not unavailable(error):
        return handle_unexpected(error)
    log.warning("database unavailable on request %s: %s", g.get("request_id"), str(error).strip()[:300])
    return service_unavailable()


def handle_unexpected(error: Exception):
    """Anything unforeseen: logged with its traceback (secrets masked), answered without one."""
    original = getattr(error, "original_exception", None) or error
    trace = redact("".join(traceback.format_exception(original)))
    log.error("unhandled error on request %s\n%s", g.get("request_id"), trace)
    return error_response(500, "internal_error", "An unexpected error occurred.")


def install(app) -> None:
    """Register the handlers so every failure in the app uses the spec's body."""
    import peewee

    app.register_error_handler(ApiError, handle_api_error)
    app.register_error_handler(peewee.DatabaseError, handle_database_error)
    app.register_error_handler(peewee.InterfaceError, handle_database_error)
    # the driver's own, where one escapes peewee's wrapping (rows fetched after the statement ran)
    app.register_error_handler(sqlite3.Error, handle_database_error)
    try:
        import psycopg
    except ImportError:  # the `postgres` extra is not installed
        return
    app.register_error_handler(psycopg.Error, handle_database_error)
    app.register_error_handler(HTTPException, handle_http_exception)
    app.register_error_handler(Exception, handle_unexpected)

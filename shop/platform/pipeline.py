"""What every request passes through: request id, early refusals, authentication, usage log."""

import random
import secrets
import time

from flask import current_app, g, request
from flask.globals import request_ctx
from werkzeug.exceptions import MethodNotAllowed

from shop import clock
from shop.platform import auth, usage_log, validation
from shop.platform.errors import ApiError, literal_route_methods

WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")


def start_request() -> None:
    """Give the request its id and start its timer; make its query string readable."""
    g.request_id = "req_" + secrets.token_hex(12)
    g.started = time.perf_counter()
    _utf8_query_string()


def _utf8_query_string() -> None:
    """Raw bytes that are not UTF-8 in the query string read as U+FFFD, as %FF already does.

    werkzeug decodes percent-escapes leniently but the raw query string strictly: `?a=\xff` sent
    unescaped made request.args (and request.full_path) raise UnicodeDecodeError, a 500.
    """
    try:
        request.query_string.decode()
    except UnicodeDecodeError:
        request.query_string = request.query_string.decode("utf-8", "replace").encode()


def refuse_early() -> None:
    """Unknown routes and methods, non-JSON writes and oversized bodies, before authentication."""
    if request.routing_exception is not None:
        raise request.routing_exception
    if request.url_rule.arguments and (methods := literal_route_methods(request.path)):
        raise MethodNotAllowed(valid_methods=methods)  # GET /messages/send is not message "send"
    if request.method == "OPTIONS":  # no CORS here: answered like any method a route lacks
        # every rule of this path (a GET and a PATCH may be two views of one path)
        raise MethodNotAllowed(
            valid_methods=request_ctx.url_adapter.allowed_methods() or request.url_rule.methods
        )
    if request.method not in WRITE_METHODS or not _has_body():
        return
    if request.blueprint in (
        "console",
        "portal",
    ):  # HTML forms post urlencoded bodies; Flask's limit holds them
        return
    if request.blueprint == "inbound":  # providers post forms and raw mail: each adapter checks its own
        return
    if request.mimetype != "application/json":
        raise ApiError(
            415,
            "unsupported_media_type",
            "Write requests with a body must use Content-Type: application/json.",
        )
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    too_large = ApiError(413, "payload_too_large", f"The request body exceeds {limit} bytes.")
    if request.content_length is not None and request.content_length > limit:
        raise too_large
    if request.content_length is None:  # chunked: no length to look at, so read it here
        try:
            # werkzeug stops reading at the limit without a word: a byte left beyond it is too many
            beyond = len(request.get_data(cache=True)) >= limit and request.environ["wsgi.input"].read(1)
        except Exception:  # the server could not decode the chunks (gunicorn: InvalidChunkSize, ...)
            raise ApiError(400, "invalid_json", "The request body could not be read.") from None
        if beyond:
            raise too_large


def _has_body() -> bool:
    chunked = "chunked" in request.headers.get("Transfer-Encoding", "").lower()
    return chunked or (request.content_length or 0) > 0


def finish_request(response):
    """Rate-limit headers for a verified key, the request id, and the usage log row."""
    response.headers["X-Request-Id"] = g.get("request_id", "")
    for name, value in g.get("rate_headers", {}).items():
        if name != "Retry-After" or response.status_code == 429:
            response.headers[name] = value
    retry_after = response.headers.get("Retry-After")
    if response.status_code == 429 and retry_after and "RateLimit-Reset" in response.headers:
        # a 429 of another limit (the tenant's send rate): the spec has Reset equal Retry-After
        response.headers["RateLimit-Reset"] = retry_after
    if g.get("usage_loggable") and _should_log(response.status_code):
        _log_usage(response.status_code)
    return response


def _should_log(status: int) -> bool:
    if request.method in WRITE_METHODS or status >= 400:
        return True
    rate = float(current_app.config["USAGE_READ_SAMPLE_RATE"])
    return rate >= 1 or random.random() < rate


def _log_usage(status: int) -> None:
    rule = request.url_rule.rule if request.url_rule else request.path
    usage_log.buffer.add(
        {
            "tenant": g.tenant.id,
            "key": g.api_key.id,
            "method": request.method,
            "path": rule[:255],
            "status": status,
            "duration": int((time.perf_counter() - g.started) * 1000),
            "created": clock.epoch_ms(),
        }
    )


def install(app) -> None:
    """Register the hooks in the order the spec's request path needs."""
    app.before_request(start_request)
    app.before_request(refuse_early)
    app.before_request(auth.authenticate)
    app.before_request(validation.refuse_unknown_query)
    app.after_request(finish_request)

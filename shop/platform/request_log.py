"""One log line per request (logger shop.request): who asked what, the answer and how long it took."""

import logging
import time

from flask import g, request

from shop.platform.auth import client_address

log = logging.getLogger("shop.request")


def request_fields(status: int) -> dict:
    """The request's line as fields: never a header, a query string or a body (they may hold secrets)."""
    started = g.get("started")
    key, tenant = g.get("api_key"), g.get("tenant")
    return {
        "request_id": g.get("request_id"),
        "tenant": tenant.id if tenant is not None else None,
        "api_key_id": key.id if key is not None else None,
        "method": request.method,
        "route": request.url_rule.rule if request.url_rule is not None else None,
        "status": status,
        "duration_ms": round((time.perf_counter() - started) * 1000, 1) if started else None,
        "client": client_address(),
    }


def log_request(response):
    """after_request: the line at INFO (text: `GET /api/v1/me 200 3.1ms ...`)."""
    if log.isEnabledFor(logging.INFO):
        fields = request_fields(response.status_code)
        log.info(
            "%s %s %s %sms %s tenant=%s key=%s client=%s",
            fields["method"],
            fields["route"] or "(no route)",
            fields["status"],
            fields["duration_ms"],
            fields["request_id"],
            fields["tenant"] or "-",
            fields["api_key_id"] or "-",
            fields["client"],
            extra={"fields": fields},
        )
    return response


def install(app) -> None:
    """Register the hook; after_request hooks run last-registered first, so register it first
    to see the response every other hook has finished."""
    app.after_request(log_request)

"""Unauthenticated discovery: the index, health, and the OpenAPI document in JSON and YAML."""

from flask import current_app

from shop.db import RETRY_AFTER_SECONDS
from shop.domain import health
from shop.platform.errors import ApiError
from shop.platform.openapi import openapi_document, openapi_yaml
from shop.platform.smorest import Blueprint

blp = Blueprint("discovery", __name__, description="Unauthenticated discovery endpoints")


def _ok(description: str, schema: dict, mimetype: str = "application/json") -> dict:
    """The documented 200 of a discovery endpoint (they return plain dicts, not schema dumps)."""
    return {"200": {"description": description, "content": {mimetype: {"schema": schema}}}}


def _closed(properties: dict) -> dict:
    return {"type": "object", "required": list(properties), "properties": properties}


VITAL = {"type": "string", "enum": ["ok", "unavailable"]}
CHECKS = _closed(
    {
        "database": VITAL,
        "queue": VITAL,
        "consumer": {
            "type": "string",
            "enum": ["ok", "stale", "missing", "no_periodic", "unknown"],
            "description": "ok: a consumer's heartbeat is fresh; stale: the newest is older than "
            "HEALTH_HEARTBEAT_STALE_SECONDS; missing: no consumer ever beat (or all stopped); "
            "no_periodic: consumers run, but none runs the periodic tasks (every one has "
            "--no-periodic), so lost or held work is never swept up.",
        },
        "webhook_deliveries": {
            "type": "string",
            "enum": ["ok", "overdue", "unknown"],
            "description": "overdue: a due delivery has waited longer than HEALTH_OVERDUE_SECONDS.",
        },
        "messages": {
            "type": "string",
            "enum": ["ok", "overdue", "unknown"],
            "description": "overdue: a due outbound message has waited longer than HEALTH_OVERDUE_SECONDS.",
        },
    }
)
SECONDS = {"type": "number", "minimum": 0}
AGE = {"type": "number", "minimum": 0, "nullable": True}
WHEN = {"type": "string", "format": "date-time", "nullable": True}
CONSUMER = _closed(
    {
        "running": {"type": "integer", "minimum": 0, "description": "Consumers with a fresh heartbeat."},
        "running_periodic": {
            "type": "integer",
            "minimum": 0,
            "description": "Of those, the ones that run the periodic tasks (exactly one is the advice).",
        },
        "last_heartbeat_at": WHEN,
        "last_heartbeat_age_seconds": AGE,
        "stale_after_seconds": SECONDS,
    }
)
BACKLOG_ITEM = _closed(
    {
        "oldest_due_at": WHEN,
        "oldest_due_age_seconds": AGE,
        "overdue_after_seconds": SECONDS,
    }
)
BACKLOG = _closed({"webhook_deliveries": BACKLOG_ITEM, "messages": BACKLOG_ITEM})
INDEX = _closed(
    {
        "object": {"type": "string", "enum": ["api"]},
        "version": {"type": "string", "enum": ["v1"]},
        "links": {"type": "object", "additionalProperties": {"type": "string"}},
    }
)
PROVIDER = {"type": "string", "example": "log provider"}
MESSAGING = {
    **_closed({"sms": PROVIDER, "email": PROVIDER}),
    "description": "The provider of each channel: `log provider` when none is configured (messages "
    "read delivery_status `logged`; nothing leaves the machine), else `gateway`, `twilio` or `smtp`.",
}
HEALTHY = {
    "type": "object",
    # consumer and backlog are left out only when their queries failed (their checks are unknown)
    "required": ["object", "status", "checks"],
    "properties": {
        "object": {"type": "string", "enum": ["health"]},
        "status": {
            "type": "string",
            "enum": ["ok", "degraded"],
            "description": "degraded: the API answers, but no consumer beats or work is overdue.",
        },
        "checks": CHECKS,
        "messaging": MESSAGING,
        "consumer": CONSUMER,
        "backlog": BACKLOG,
    },
}
DOCUMENT = {
    "type": "object",
    "required": ["openapi", "info", "paths"],
    "description": "An OpenAPI 3.0 document (this one).",
}
UNAVAILABLE = {
    "503": {
        "description": "service_unavailable: the database or the queue does not answer; details "
        "holds every check as in a 200 (the others may be unknown).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
}


@blp.route("")
@blp.public
@blp.doc(responses=_ok("The API index.", INDEX))
@blp.doc(operationId="getApiIndex")
def index():
    """The API index: version and where to find the rest."""
    return {
        "object": "api",
        "version": "v1",
        "links": {
            "health": "/api/v1/health",
            "openapi_json": "/api/v1/openapi.json",
            "openapi_yaml": "/api/v1/openapi.yaml",
            "docs": "/api/v1/docs",
            "me": "/api/v1/me",
        },
    }


@blp.route("/health")
@blp.public
@blp.doc(responses={**_ok("The database and the queue answer: ok or degraded.", HEALTHY), **UNAVAILABLE})
@blp.doc(operationId="getHealth")
def health_check():
    """Health: the database and the queue answer, a consumer is alive, no work is overdue."""
    body = health.report(current_app.config)
    if health.unavailable(body):
        raise ApiError(
            503,
            "service_unavailable",
            "A dependency is unavailable.",
            details=body["checks"],
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    return body


@blp.route("/openapi.json")
@blp.public
@blp.doc(responses=_ok("The OpenAPI 3 document.", DOCUMENT))
@blp.doc(operationId="getOpenApiJson")
def openapi_json():
    """The OpenAPI 3 document of this API, generated from its schemas."""
    return openapi_document(current_app.extensions["shop.api"])


@blp.route("/openapi.yaml")
@blp.public
@blp.doc(responses=_ok("The OpenAPI 3 document as YAML.", DOCUMENT, "application/yaml"))
@blp.doc(operationId="getOpenApiYaml")
def openapi_yaml_document():
    """The same OpenAPI 3 document as YAML."""
    api = current_app.extensions["shop.api"]
    return current_app.response_class(openapi_yaml(api), mimetype="application/yaml")

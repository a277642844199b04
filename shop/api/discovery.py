"""Unauthenticated discovery: the index, health, and the OpenAPI document in JSON and YAML."""

from flask import current_app

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


CHECKS = _closed({name: {"type": "string", "enum": ["ok", "unavailable"]} for name in ("database", "queue")})
INDEX = _closed(
    {
        "object": {"type": "string", "enum": ["api"]},
        "version": {"type": "string", "enum": ["v1"]},
        "links": {"type": "object", "additionalProperties": {"type": "string"}},
    }
)
HEALTHY = _closed(
    {
        "object": {"type": "string", "enum": ["health"]},
        "status": {"type": "string", "enum": ["ok"]},
        "checks": CHECKS,
    }
)
DOCUMENT = {
    "type": "object",
    "required": ["openapi", "info", "paths"],
    "description": "An OpenAPI 3.0 document (this one).",
}
UNAVAILABLE = {
    "503": {
        "description": "service_unavailable: a dependency does not answer; details holds "
        "every check (database, queue) as ok or unavailable.",
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
@blp.doc(responses={**_ok("Every dependency answers.", HEALTHY), **UNAVAILABLE})
@blp.doc(operationId="getHealth")
def health_check():
    """Health: the database and the task queue answer."""
    checks = health.check()
    if any(value != "ok" for value in checks.values()):
        raise ApiError(503, "service_unavailable", "A dependency is unavailable.", details=checks)
    return {"object": "health", "status": "ok", "checks": checks}


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

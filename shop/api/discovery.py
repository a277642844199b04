"""Unauthenticated discovery: the index, health, and the OpenAPI document in JSON and YAML."""

from flask import current_app

from shop.domain import health
from shop.platform.errors import ApiError
from shop.platform.openapi import openapi_document, openapi_yaml
from shop.platform.smorest import Blueprint

blp = Blueprint("discovery", __name__, description="Unauthenticated discovery endpoints")


def _ok(description: str, mimetype: str = "application/json", kind: str = "object") -> dict:
    """The documented 200 of a discovery endpoint (they return plain dicts, not schema dumps)."""
    return {"200": {"description": description, "content": {mimetype: {"schema": {"type": kind}}}}}


UNAVAILABLE = {"503": {"description": "A dependency is unavailable.",
                       "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}}


@blp.route("")
@blp.public
@blp.doc(responses=_ok("The API index."))
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
@blp.doc(responses={**_ok("Every dependency answers."), **UNAVAILABLE})
def health_check():
    """Health: the database and the task queue answer."""
    checks = health.check()
    if any(value != "ok" for value in checks.values()):
        raise ApiError(503, "service_unavailable", "A dependency is unavailable.", details=checks)
    return {"object": "health", "status": "ok", "checks": checks}


@blp.route("/openapi.json")
@blp.public
@blp.doc(responses=_ok("The OpenAPI 3 document."))
def openapi_json():
    """The OpenAPI 3 document of this API, generated from its schemas."""
    return openapi_document(current_app.extensions["shop.api"])


@blp.route("/openapi.yaml")
@blp.public
@blp.doc(responses=_ok("The OpenAPI 3 document as YAML.", "application/yaml", "string"))
def openapi_yaml_document():
    """The same OpenAPI 3 document as YAML."""
    api = current_app.extensions["shop.api"]
    return current_app.response_class(openapi_yaml(api), mimetype="application/yaml")

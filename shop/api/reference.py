"""GET /api/v1/docs: a browsable reference of the served OpenAPI document, with local assets only."""

from pathlib import Path

import flask_swagger_ui
from flask import abort, current_app, render_template, send_file

from shop.platform.smorest import Blueprint

blp = Blueprint("reference", __name__, description="The browsable API reference")

SWAGGER_UI = Path(flask_swagger_ui.__file__).parent / "dist"
OWN_ASSETS = Path(__file__).resolve().parent.parent / "assets"
# the only files the page loads; anything else is the JSON 404, never a directory listing
ASSETS = {
    "swagger-ui.css": SWAGGER_UI / "swagger-ui.css",
    "swagger-ui-bundle.js": SWAGGER_UI / "swagger-ui-bundle.js",
    "favicon-32x32.png": SWAGGER_UI / "favicon-32x32.png",
    "api-docs.js": OWN_ASSETS / "api-docs.js",
    "api-docs.css": OWN_ASSETS / "api-docs.css",
}
ASSET_NAME = {
    "name": "filename",
    "in": "path",
    "required": True,
    "description": "One of the files the reference page loads; anything else is 404.",
    "schema": {"type": "string", "enum": sorted(ASSETS)},
}
# the page needs no origin but its own; Swagger UI sets inline styles on its elements
PAGE_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "object-src 'none'; frame-ancestors 'none'; base-uri 'none'"
)


def _html(description: str) -> dict:
    return {"200": {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}}


@blp.route("/docs")
@blp.public
@blp.doc(responses=_html("The API reference page (Swagger UI over /api/v1/openapi.json)."))
@blp.doc(operationId="getApiDocs")
def api_docs():
    """The API reference: Swagger UI over this service's OpenAPI document, served locally."""
    response = current_app.make_response(render_template("api_docs.html"))
    response.headers["Content-Security-Policy"] = PAGE_POLICY
    return response


@blp.route("/docs/assets/<string:filename>", parameters=[ASSET_NAME])
@blp.public
@blp.doc(
    responses={
        "200": {
            "description": "A script, style sheet or icon of the reference page.",
            "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}},
        }
    }
)
@blp.refuses(404, "not_found: not one of the files the page loads.")
@blp.doc(operationId="getApiDocsAsset")
def api_docs_asset(filename: str):
    """One asset of the reference page (Swagger UI's files ship in the flask-swagger-ui package)."""
    path = ASSETS.get(filename)
    if path is None:
        abort(404)
    return send_file(path, max_age=86400)

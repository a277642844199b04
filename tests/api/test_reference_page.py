"""GET /api/v1/docs: the browsable reference and every asset it loads come from the service itself."""

import re

import pytest

from tests.helpers import assert_error


def referenced_urls(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="([^"]+)"', html)


def test_reference_page_is_html_over_the_served_document(client):
    response = client.get("/api/v1/docs")
    assert response.status_code == 200 and response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    assert 'data-openapi-url="/api/v1/openapi.json"' in page
    assert "default-src 'self'" in response.headers["Content-Security-Policy"]
    assert "Authorization" not in response.headers.get("Vary", "")  # public: no key needed


def test_every_asset_of_the_page_is_served_locally(client):
    page = client.get("/api/v1/docs").get_data(as_text=True)
    urls = referenced_urls(page)
    assets = [url for url in urls if url.startswith("/api/v1/docs/assets/")]
    assert len(assets) >= 4  # favicon, two style sheets, two scripts
    assert all(url.startswith("/") and not url.startswith("//") for url in urls), urls
    for url in assets:
        response = client.get(url)
        assert response.status_code == 200, url
        assert len(response.data) > 100, url
    script = client.get("/api/v1/docs/assets/api-docs.js").get_data(as_text=True)
    assert "validatorUrl: null" in script  # Swagger UI would otherwise call an outside validator


def test_swagger_ui_bundle_is_the_real_library(client):
    bundle = client.get("/api/v1/docs/assets/swagger-ui-bundle.js")
    assert bundle.mimetype in ("text/javascript", "application/javascript")
    assert b"SwaggerUIBundle" in bundle.data and len(bundle.data) > 500_000


@pytest.mark.parametrize(
    "name",
    ["nope.js", "..%2fsetup.cfg", "LICENSE", "index.css", "%00"],
    ids=[
        "an unknown file",
        "a path outside",
        "a file the page does not use",
        "another swagger file",
        "a NUL byte",
    ],
)
def test_anything_but_the_page_assets_is_the_json_404(client, name):
    assert_error(client.get(f"/api/v1/docs/assets/{name}"), 404, "not_found")


def test_the_index_links_the_reference(client):
    assert client.get("/api/v1").get_json()["links"]["docs"] == "/api/v1/docs"


def test_the_reference_is_in_the_document(client):
    spec = client.get("/api/v1/openapi.json").get_json()
    operation = spec["paths"]["/api/v1/docs"]["get"]
    assert "text/html" in operation["responses"]["200"]["content"]
    assert operation["security"] == []

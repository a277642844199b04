"""The unauthenticated discovery endpoints: index, health, OpenAPI in JSON and YAML."""

import threading

import yaml
from openapi_spec_validator import validate

from shop.domain import health
from tests.helpers import assert_error

SPEC_PATHS = {"/api/v1/me", "/api/v1/customers", "/api/v1/usage", "/api/v1/health", "/api/v1"}


def test_index_lists_where_things_are(client):
    response = client.get("/api/v1")
    assert response.status_code == 200
    body = response.get_json()
    assert body["object"] == "api" and body["version"] == "v1"
    for link in body["links"].values():
        assert link.startswith("/api/v1")


def test_health_checks_database_and_queue(client):
    body = client.get("/api/v1/health").get_json()
    assert (
        body["object"] == "health" and body["status"] == "degraded"
    )  # no consumer: tests/api/test_health.py
    assert body["checks"]["database"] == "ok" and body["checks"]["queue"] == "ok"


def test_health_reports_a_broken_queue_as_503(client, monkeypatch):
    from shop.db import on_postgres
    from tasks import huey

    if on_postgres():  # a server that does not answer, with no connection opened yet
        huey.storage.close()
        monkeypatch.setattr(huey.storage, "dsn", "postgresql://nobody@127.0.0.1:1/none")
    else:
        monkeypatch.setattr(huey.storage, "filename", "/nonexistent-dir/queue.sqlite3")
        monkeypatch.setattr(huey.storage, "_local", threading.local())  # no connection opened yet
    response = client.get("/api/v1/health")
    error = assert_error(response, 503, "service_unavailable")
    assert error["details"] == {
        "database": "ok",
        "queue": "unavailable",
        "consumer": "missing",
        "webhook_deliveries": "ok",
        "messages": "ok",
    }
    assert health.check()["queue"] == "unavailable"
    huey.storage.close()  # the next test connects to the real queue again


def test_openapi_json_is_valid_openapi_3_with_every_endpoint(client):
    spec = client.get("/api/v1/openapi.json").get_json()
    validate(spec)
    assert spec["openapi"].startswith("3.")
    assert SPEC_PATHS <= set(spec["paths"])


def test_every_operation_documents_its_success_status(client):
    # the discovery endpoints once listed only their errors: a contract checker called their 200 undocumented
    spec = client.get("/api/v1/openapi.json").get_json()
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            assert any(status.startswith("2") for status in operation["responses"]), f"{method} {path}"
    assert "503" in spec["paths"]["/api/v1/health"]["get"]["responses"]


def test_openapi_yaml_is_the_same_document(client):
    response = client.get("/api/v1/openapi.yaml")
    assert response.status_code == 200 and response.mimetype == "application/yaml"
    assert yaml.safe_load(response.get_data(as_text=True)) == client.get("/api/v1/openapi.json").get_json()


def test_openapi_lists_scopes_and_error_responses(client):
    spec = client.get("/api/v1/openapi.json").get_json()
    customers = spec["paths"]["/api/v1/customers"]["get"]
    assert customers["x-required-scope"] == "customers.read"
    assert customers["security"] == [{"bearerAuth": []}]
    for status in ("400", "401", "402", "403", "429", "500", "503"):
        example = customers["responses"][status]["content"]["application/json"]["example"]
        assert set(example["error"]) == {"type", "code", "message", "param", "details", "request_id"}
    health_op = spec["paths"]["/api/v1/health"]["get"]
    assert health_op["security"] == [] and "401" not in health_op["responses"]
    assert spec["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


def test_discovery_needs_no_key_and_sets_request_id(client):
    for path in ("/api/v1", "/api/v1/health", "/api/v1/openapi.json", "/api/v1/openapi.yaml"):
        response = client.get(path)
        assert response.status_code == 200
        assert response.headers["X-Request-Id"].startswith("req_")


def test_every_post_documents_idempotency_conflicts_and_the_header(client):
    spec = client.get("/api/v1/openapi.json").get_json()
    posts = [op for path in spec["paths"].values() for method, op in path.items() if method == "post"]
    assert posts
    for operation in posts:
        assert "409" in operation["responses"], operation.get("summary")
        names = {p["name"] for p in operation.get("parameters", []) if p.get("in") == "header"}
        assert "Idempotency-Key" in names, operation.get("summary")


def test_path_ids_are_documented_as_the_routes_accept_them(client):
    import re

    spec = client.get("/api/v1/openapi.json").get_json()
    params = {
        (path, p["name"]): p
        for path, item in spec["paths"].items()
        for p in item.get("parameters", [])
        if p["in"] == "path"
    }
    assert params
    for (path, name), parameter in params.items():
        assert parameter["description"], (path, name)
        pattern = parameter["schema"].get("pattern")
        if name == "filename":  # the reference page's assets: exactly the files it loads
            assert parameter["schema"]["enum"]
        elif name == "hold_id":  # a slot hold's id as holds.new_hold_id makes it
            from shop.domain.appointments.holds import new_hold_id

            assert re.fullmatch(pattern, new_hold_id()) and not re.fullmatch(pattern, "2147483647")
        elif name == "feed_id":  # a calendar feed's id as feeds.create_feed makes it
            assert re.fullmatch(pattern, "calfeed_" + "0a" * 12) and not re.fullmatch(pattern, "2147483647")
        elif not path.startswith("/api/v1/webhooks/"):  # numeric ids: the pattern is what parse_id takes
            assert pattern and re.fullmatch(pattern, "2147483647") and not re.fullmatch(pattern, "abc")

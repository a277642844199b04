"""Every non-2xx response is the spec's error body with the spec's status, code and headers."""

import io
import json

import pytest

from shop.models import Customer
from tests.helpers import assert_error


def test_unknown_route_is_a_json_404(client):
    error = assert_error(client.get("/api/v1/no-such-thing"), 404, "not_found")
    assert error["type"] == "not_found_error"


def test_unknown_route_outside_the_api_is_a_json_404(client):
    assert_error(client.get("/"), 404, "not_found")


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("path", ["/api/v1//customers", "/api/v1/customers//", "/api//v1/me"])
def test_a_doubled_slash_is_a_json_404_not_a_redirect(client, acme, method, path):
    response = client.open(path, method=method, json={}, headers=acme)
    assert_error(response, 404, "not_found")
    assert "Location" not in response.headers


RAW_LATIN1_BYTE = {"QUERY_STRING": "limit=\xff"}  # WSGI carries raw bytes as latin-1 text


def test_a_raw_non_utf8_byte_in_the_query_is_read_like_a_bad_escape(client, acme):
    # ?limit=%FF (escaped) was already a 400; the same byte sent unescaped was a 500
    response = client.get("/api/v1/customers", headers=acme, environ_overrides=RAW_LATIN1_BYTE)
    assert_error(response, 400, "invalid_query", param="limit")


def test_a_raw_non_utf8_byte_in_the_query_of_an_idempotent_post_is_not_a_500(client, acme):
    response = client.post(
        "/api/v1/_probe",
        json={"display_name": "Ann"},
        headers={**acme, "Idempotency-Key": "raw-byte-1"},
        environ_overrides={"QUERY_STRING": "x=\xff"},
    )
    assert response.status_code == 201


def test_a_raw_non_utf8_byte_is_ignored_by_usage_like_any_malformed_value(client, acme):
    response = client.get(
        "/api/v1/usage", headers=acme, environ_overrides={"QUERY_STRING": "window_days=\xff"}
    )
    assert response.status_code == 200


def test_wrong_method_is_405_with_allow_header(client, acme):
    response = client.put("/api/v1/me", headers=acme)
    error = assert_error(response, 405, "method_not_allowed")
    assert error["type"] == "method_not_allowed_error"
    assert set(response.headers["Allow"].split(", ")) >= {"GET", "HEAD"}


@pytest.mark.parametrize(
    "method, path",
    [
        ("GET", "/api/v1/messages/send"),  # also the shape of /messages/<message_id>
        ("PUT", "/api/v1/messages/send"),
        ("GET", "/api/v1/notifications/archive-read"),  # also the shape of /notifications/<id>
        ("DELETE", "/api/v1/notifications/archive-read"),
    ],
)
def test_a_post_only_route_is_405_allowing_post_alone_though_an_id_route_shares_its_shape(
    client, acme, method, path
):
    response = client.open(path, method=method, headers=acme)
    assert_error(response, 405, "method_not_allowed")
    assert response.headers["Allow"] == "POST"


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer sk_test_acme_token_0001"}], ids=["no key", "key"]
)
def test_options_is_405_in_json_before_authentication(client, acme, headers):
    response = client.options("/api/v1/appointments", headers=headers)
    assert_error(response, 405, "method_not_allowed")
    assert response.headers["Allow"] == "GET, HEAD, POST" and "RateLimit-Limit" not in response.headers


def test_the_static_route_is_gone(client, acme):
    assert_error(client.get("/static/app.js"), 404, "not_found")


def test_write_with_a_non_json_body_is_415_before_authentication(client):
    response = client.post("/api/v1/_probe", data="display_name=x", content_type="text/plain")
    error = assert_error(response, 415, "unsupported_media_type")
    assert error["type"] == "unsupported_media_type_error"
    assert "RateLimit-Limit" not in response.headers


def test_write_with_a_form_body_is_415(client, acme):
    response = client.post("/api/v1/_probe", data={"display_name": "x"}, headers=acme)
    assert_error(response, 415, "unsupported_media_type")
    assert Customer.select().count() == 0


def test_write_without_a_body_needs_no_content_type(client, acme):
    response = client.delete("/api/v1/_probe", headers=acme)
    assert response.status_code == 200


def test_json_content_type_with_charset_is_accepted(client, acme):
    response = client.post(
        "/api/v1/_probe",
        data=json.dumps({"display_name": "Ann"}),
        content_type="application/json; charset=utf-8",
        headers=acme,
    )
    assert response.status_code == 201


def test_oversized_body_is_413(client, app, acme):
    limit = app.config["MAX_CONTENT_LENGTH"]
    body = json.dumps({"display_name": "x" * limit})
    response = client.post("/api/v1/_probe", data=body, content_type="application/json", headers=acme)
    error = assert_error(response, 413, "payload_too_large")
    assert error["type"] == "invalid_request_error"
    assert Customer.select().count() == 0


@pytest.mark.parametrize("extra, status", [(0, 401), (1, 413)], ids=["at the limit", "a byte over"])
def test_a_chunked_body_over_the_limit_is_413_before_authentication(client, app, acme, extra, status):
    limit = app.config["MAX_CONTENT_LENGTH"]
    body = b'{"display_name": "' + b"x" * (limit - 20 + extra) + b'"}'  # limit + extra bytes
    response = client.post(
        "/api/v1/_probe",
        input_stream=io.BytesIO(body),
        content_type="application/json",
        headers={"Transfer-Encoding": "chunked"},  # no key: 413 comes first
        environ_base={"wsgi.input_terminated": True},
    )  # as a server streaming it
    assert response.status_code == status  # at the limit: read whole, then refused for want of a key


class InvalidChunkSize(Exception):
    """What gunicorn raises reading a body with a malformed chunk (neither OSError nor ValueError)."""


class BadChunks(io.BytesIO):
    """A request stream the server cannot decode."""

    def read(self, *args):
        raise InvalidChunkSize("zz")

    readinto = readline = read


def test_a_chunked_body_the_server_cannot_decode_is_400_not_500(client, acme):
    response = client.post(
        "/api/v1/_probe",
        input_stream=BadChunks(),
        content_type="application/json",
        headers={"Transfer-Encoding": "chunked"},
        environ_base={"wsgi.input_terminated": True},
    )
    assert_error(response, 400, "invalid_json")


def test_unparseable_json_is_400_invalid_json(client, acme):
    response = client.post(
        "/api/v1/_probe", data='{"display_name": ', content_type="application/json", headers=acme
    )
    assert_error(response, 400, "invalid_json")
    assert Customer.select().count() == 0


@pytest.mark.parametrize(
    "body",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"display_name": ' * 5_000 + "1" + "}" * 5_000,
        '{"display_name": "Ann", "count": ' + "1" * 5_000 + "}",
    ],
    ids=["deeply nested array", "deeply nested object", "5000-digit integer"],
)
def test_json_python_cannot_hold_is_400_invalid_json(client, acme, body):
    response = client.post("/api/v1/_probe", data=body, content_type="application/json", headers=acme)
    assert_error(response, 400, "invalid_json")
    assert Customer.select().count() == 0


@pytest.mark.parametrize("body", ["[1, 2]", '"text"', "42", "null"], ids=lambda b: f"body {b}")
def test_a_body_that_is_not_an_object_is_400(client, acme, body):
    response = client.post("/api/v1/_probe", data=body, content_type="application/json", headers=acme)
    assert_error(response, 400, "invalid_json")


def test_missing_required_field_is_missing_field(client, acme):
    response = client.post("/api/v1/_probe", json={"email": "a@b.test"}, headers=acme)
    assert_error(response, 400, "missing_field", param="display_name")


def test_wrong_type_is_invalid_field(client, acme):
    response = client.post("/api/v1/_probe", json={"display_name": ["Ann"]}, headers=acme)
    assert_error(response, 400, "invalid_field", param="display_name")


def test_unknown_field_is_invalid_field(client, acme):
    response = client.post("/api/v1/_probe", json={"display_name": "Ann", "nick": "A"}, headers=acme)
    assert_error(response, 400, "invalid_field", param="nick")


def test_32_bit_overflow_is_invalid_value(client, acme):
    response = client.post(
        "/api/v1/_probe", json={"display_name": "Ann", "count": 2_147_483_648}, headers=acme
    )
    assert_error(response, 400, "invalid_value", param="count")


def test_largest_32_bit_value_is_accepted(client, acme):
    response = client.post(
        "/api/v1/_probe", json={"display_name": "Ann", "count": 2_147_483_647}, headers=acme
    )
    assert response.status_code == 201


def test_query_parameter_errors_are_invalid_query(client, acme):
    assert_error(client.get("/api/v1/customers?limit=abc", headers=acme), 400, "invalid_query", "limit")


def test_unexpected_failure_is_500_without_traceback_or_secrets(client, acme, caplog):
    response = client.post("/api/v1/_probe", json={"display_name": "Ann", "fail": "crash"}, headers=acme)
    error = assert_error(response, 500, "internal_error")
    assert error["type"] == "api_error"
    text = response.get_data(as_text=True)
    assert "Traceback" not in text and "sk_live" not in text and "RuntimeError" not in text
    assert Customer.select().count() == 0
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "unhandled error" in logged and "RuntimeError" in logged
    assert "sk_live_should_not_leak" not in logged and "sk_live_[redacted]" in logged


def test_every_response_carries_a_distinct_request_id(client):
    first = client.get("/api/v1/health").headers["X-Request-Id"]
    second = client.get("/api/v1/health").headers["X-Request-Id"]
    assert first.startswith("req_") and second.startswith("req_") and first != second

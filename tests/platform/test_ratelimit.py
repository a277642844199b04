"""The per-key token bucket: capacity, refill, headers, and separate buckets per key."""

from datetime import datetime

import pytest

from shop import clock
from shop.models import ApiKey, UsageLog
from tests.helpers import ALL_SCOPES, assert_error, auth_headers, logged_rows, tenant_fixture


@pytest.fixture
def small_bucket(app, monkeypatch):
    monkeypatch.setitem(app.config, "RATE_LIMIT_CAPACITY", 5)
    monkeypatch.setitem(app.config, "RATE_LIMIT_REFILL", 1)


def test_headers_on_every_response_to_a_verified_key(client, acme):
    response = client.get("/api/v1/me", headers=acme)
    assert response.headers["RateLimit-Limit"] == "100"
    assert response.headers["RateLimit-Remaining"] == "99"
    assert response.headers["RateLimit-Reset"] == "1"
    assert "Retry-After" not in response.headers


def test_error_responses_to_a_verified_key_carry_the_headers(client, acme):
    response = client.get("/api/v1/customers?limit=0", headers=acme)
    assert response.status_code == 400
    assert response.headers["RateLimit-Remaining"] == "99"


@pytest.mark.parametrize(
    "path", ["/api/v1", "/api/v1/health", "/api/v1/openapi.json", "/api/v1/openapi.yaml"]
)
def test_discovery_endpoints_carry_no_rate_limit_headers(client, acme, path):
    response = client.get(path, headers=acme)
    assert response.status_code == 200
    assert not [name for name in response.headers.keys() if name.startswith("RateLimit")]


def test_bucket_empties_then_429_with_retry_after(client, acme, small_bucket):
    remaining = [client.get("/api/v1/me", headers=acme).headers["RateLimit-Remaining"] for _ in range(5)]
    assert remaining == ["4", "3", "2", "1", "0"]
    response = client.get("/api/v1/me", headers=acme)
    error = assert_error(response, 429, "rate_limited")
    assert error["type"] == "rate_limit_error"
    assert response.headers["Retry-After"] == "1"
    assert response.headers["RateLimit-Reset"] == response.headers["Retry-After"]
    assert response.headers["RateLimit-Remaining"] == "0"


def test_429_is_not_logged_as_usage(client, acme, small_bucket):
    for _ in range(7):
        client.get("/api/v1/me", headers=acme)
    assert logged_rows().count() == 5
    assert logged_rows().where(UsageLog.status == 429).count() == 0


def test_bucket_refills_over_time(client, acme, small_bucket):
    for _ in range(5):
        client.get("/api/v1/me", headers=acme)
    assert client.get("/api/v1/me", headers=acme).status_code == 429
    clock.advance(2.0)
    response = client.get("/api/v1/me", headers=acme)
    assert response.status_code == 200
    # the refused request took nothing: two tokens came back and this request spent one
    assert response.headers["RateLimit-Remaining"] == "1"
    clock.advance(100)
    response = client.get("/api/v1/me", headers=acme)
    assert response.headers["RateLimit-Remaining"] == "4"  # refilled to capacity, never above it
    assert response.headers["RateLimit-Reset"] == "1"


def test_live_and_test_keys_have_separate_buckets(client, load, small_bucket):
    tenant = tenant_fixture("acme")
    tenant["api_keys"].append(
        {"id": "key_acme_live", "token": "sk_live_acme_token_0001", "mode": "live", "scopes": ALL_SCOPES}
    )
    load(tenant)
    test_key, live_key = auth_headers("sk_test_acme_token_0001"), auth_headers("sk_live_acme_token_0001")
    for _ in range(5):
        client.get("/api/v1/me", headers=test_key)
    assert client.get("/api/v1/me", headers=test_key).status_code == 429
    response = client.get("/api/v1/me", headers=live_key)
    assert response.status_code == 200
    assert response.headers["RateLimit-Remaining"] == "4"


@pytest.mark.parametrize(
    "dead",
    [{"revoked": True}, {"expires_at": datetime(2000, 1, 1)}],
    ids=["a revoked key", "an expired key"],
)
def test_requests_with_a_dead_key_take_nothing_from_its_bucket(client, acme, small_bucket, dead):
    assert client.get("/api/v1/me", headers=acme).headers["RateLimit-Remaining"] == "4"
    ApiKey.update(**dead).where(ApiKey.id == "key_acme").execute()
    for _ in range(3):
        assert_error(client.get("/api/v1/me", headers=acme), 401, "unauthorized")
    ApiKey.update(revoked=False, expires_at=None).where(ApiKey.id == "key_acme").execute()

    assert client.get("/api/v1/me", headers=acme).headers["RateLimit-Remaining"] == "3"

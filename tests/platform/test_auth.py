"""Authentication and the tenant gates, exactly as the spec's Authentication section."""

from datetime import timedelta

import pytest

from shop import clock
from shop.models import ApiKey, UsageLog
from tests.helpers import assert_error, auth_headers, logged_rows, tenant_fixture


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        "Basic c2stdGVzdA==",
        "Bearer sk_test_unknown_key",
        "Bearer " + "x" * 500,
        "sk_test_acme_token_0001",
    ],
    ids=lambda h: f"authorization {h!r:.30}",
)
def test_missing_or_malformed_key_is_401(client, acme, header):
    headers = {} if header is None else {"Authorization": header}
    response = client.get("/api/v1/me", headers=headers)
    error = assert_error(response, 401, "unauthorized")
    assert error["type"] == "authentication_error"
    assert "RateLimit-Limit" not in response.headers
    assert logged_rows().count() == 0


BARE_CHALLENGE = 'Bearer realm="api"'
TOKEN_CHALLENGE = 'Bearer realm="api", error="invalid_token"'


@pytest.mark.parametrize(
    "header, challenge",
    [
        (None, BARE_CHALLENGE),
        ("", BARE_CHALLENGE),
        ("Bearer ", BARE_CHALLENGE),
        ("Basic c2stdGVzdA==", BARE_CHALLENGE),
        ("sk_test_acme_token_0001", BARE_CHALLENGE),
        ("Bearer sk_test_unknown_key", TOKEN_CHALLENGE),
        ("Bearer " + "x" * 500, TOKEN_CHALLENGE),
        ("bearer sk_test_acme_token_0002", TOKEN_CHALLENGE),
    ],
    ids=[
        "no header",
        "empty header",
        "bearer without token",
        "another scheme",
        "token without scheme",
        "unknown token",
        "overlong token",
        "lower-case scheme, unknown token",
    ],
)
def test_every_401_carries_a_bearer_challenge(client, acme, header, challenge):
    headers = {} if header is None else {"Authorization": header}
    response = client.get("/api/v1/me", headers=headers)
    assert_error(response, 401, "unauthorized")
    assert response.headers["WWW-Authenticate"] == challenge


def test_a_revoked_or_expired_key_is_an_invalid_token(client, runner, load):
    load(tenant_fixture("acme"), tenant_fixture("globex"))
    runner.invoke(args=["shop", "key", "revoke", "key_acme"])
    ApiKey.update(expires_at=clock.now() - timedelta(seconds=1)).where(ApiKey.id == "key_globex").execute()
    for token in ("sk_test_acme_token_0001", "sk_test_globex_token_0001"):
        response = client.get("/api/v1/customers", headers=auth_headers(token))
        assert_error(response, 401, "unauthorized")
        assert response.headers["WWW-Authenticate"] == TOKEN_CHALLENGE


def test_other_refusals_carry_no_challenge(client, load):
    load(tenant_fixture("acme", scopes=["appointments.read"]))
    response = client.get("/api/v1/customers", headers=auth_headers("sk_test_acme_token_0001"))
    assert response.status_code == 403 and "WWW-Authenticate" not in response.headers


def test_bearer_scheme_is_case_insensitive(client, acme):
    response = client.get("/api/v1/me", headers={"Authorization": "bearer sk_test_acme_token_0001"})
    assert response.status_code == 200


def test_revoked_key_is_401(client, runner, acme):
    assert client.get("/api/v1/me", headers=acme).status_code == 200
    result = runner.invoke(args=["shop", "key", "revoke", "key_acme"])
    assert result.exit_code == 0, result.output
    assert_error(client.get("/api/v1/me", headers=acme), 401, "unauthorized")


def test_expired_key_is_401(client, acme):
    ApiKey.update(expires_at=clock.now() + timedelta(minutes=5)).execute()
    assert client.get("/api/v1/me", headers=acme).status_code == 200
    clock.advance(301)
    assert_error(client.get("/api/v1/me", headers=acme), 401, "unauthorized")


def test_keys_are_stored_hashed(acme):
    key = ApiKey.get_by_id("key_acme")
    assert "sk_test_acme_token_0001" not in (key.token_hash, key.token_prefix * 2)
    assert len(key.token_hash) == 64


def test_missing_scope_is_403_with_required_scope(client, load):
    load(tenant_fixture("acme", scopes=["appointments.read"]))
    response = client.get("/api/v1/customers", headers=auth_headers("sk_test_acme_token_0001"))
    error = assert_error(response, 403, "insufficient_scope")
    assert error["type"] == "permission_error"
    assert error["details"] == {"required_scope": "customers.read"}


def test_starter_plan_is_402_upgrade_required(client, load):
    load(tenant_fixture("acme", plan="starter"))
    response = client.get("/api/v1/me", headers=auth_headers("sk_test_acme_token_0001"))
    error = assert_error(response, 402, "upgrade_required")
    assert error["type"] == "payment_required_error"
    assert error["details"]["required_plan"] == "pro"
    assert error["details"]["current_plan"] == "starter"
    assert error["details"]["upgrade_url"].startswith("https://")


@pytest.mark.parametrize("status", ["canceled", "unpaid"])
def test_inactive_subscription_is_402_billing_subscription_required(client, load, status):
    load(tenant_fixture("acme", billing_status=status, current_period_end="2026-11-01T00:00:00Z"))
    response = client.get("/api/v1/me", headers=auth_headers("sk_test_acme_token_0001"))
    error = assert_error(response, 402, "billing_subscription_required")
    assert error["details"] == {
        "billing_required": True,
        "reason": "subscription_inactive",
        "subscription_status": status,
        "current_period_end": "2026-11-01T00:00:00.000Z",
    }


@pytest.mark.parametrize("status", ["past_due", "incomplete"])
def test_other_billing_gates_are_402_payment_required(client, load, status):
    load(tenant_fixture("acme", billing_status=status))
    response = client.get("/api/v1/me", headers=auth_headers("sk_test_acme_token_0001"))
    assert_error(response, 402, "payment_required")


def test_trialing_subscription_passes(client, load):
    load(tenant_fixture("acme", billing_status="trialing"))
    assert client.get("/api/v1/me", headers=auth_headers("sk_test_acme_token_0001")).status_code == 200


def test_suspended_tenant_is_503(client, load):
    load(tenant_fixture("acme", suspended=True))
    response = client.get("/api/v1/me", headers=auth_headers("sk_test_acme_token_0001"))
    error = assert_error(response, 503, "tenant_suspended")
    assert error["type"] == "service_unavailable_error"


@pytest.mark.parametrize(
    "fields", [{"plan": "starter"}, {"billing_status": "past_due"}, {"billing_status": "canceled"}], ids=str
)
def test_usage_passes_the_plan_and_billing_gates(client, load, fields):
    load(tenant_fixture("acme", **fields))
    headers = auth_headers("sk_test_acme_token_0001")
    assert client.get("/api/v1/me", headers=headers).status_code == 402
    response = client.get("/api/v1/usage", headers=headers)
    assert response.status_code == 200
    assert response.get_json()["object"] == "api_usage"


def test_usage_stays_available_to_a_suspended_tenant(client, load):
    # the spec: usage "stays available when plan or account status blocks other resources"
    load(tenant_fixture("acme", suspended=True))
    headers = auth_headers("sk_test_acme_token_0001")
    assert_error(client.get("/api/v1/me", headers=headers), 503, "tenant_suspended")
    response = client.get("/api/v1/usage", headers=headers)
    assert response.status_code == 200 and response.get_json()["object"] == "api_usage"


def test_gated_responses_carry_rate_limit_headers(client, load):
    load(tenant_fixture("acme", plan="starter"))
    response = client.get("/api/v1/me", headers=auth_headers("sk_test_acme_token_0001"))
    assert response.headers["RateLimit-Limit"] == "100"


def test_repeated_failures_from_one_address_get_429(client, app, acme, monkeypatch):
    monkeypatch.setitem(app.config, "AUTH_FAILURES_PER_MINUTE", 3)
    bad = auth_headers("sk_test_wrong")
    statuses = [client.get("/api/v1/me", headers=bad).status_code for _ in range(3)]
    assert statuses == [401, 401, 401]
    response = client.get("/api/v1/me", headers=bad)
    error = assert_error(response, 429, "rate_limited")
    assert error["type"] == "rate_limit_error"
    assert 1 <= int(response.headers["Retry-After"]) <= 61
    assert "RateLimit-Limit" not in response.headers
    # the whole address is held back, a valid key included, until the minute is over
    assert client.get("/api/v1/me", headers=acme).status_code == 429
    clock.advance(61)
    assert client.get("/api/v1/me", headers=acme).status_code == 200
    assert logged_rows().where(UsageLog.status == 429).count() == 0


def test_failures_from_another_address_do_not_count(client, app, acme, monkeypatch):
    monkeypatch.setitem(app.config, "AUTH_FAILURES_PER_MINUTE", 2)
    bad = auth_headers("sk_test_wrong")
    for _ in range(3):
        client.get("/api/v1/me", headers=bad, environ_base={"REMOTE_ADDR": "127.0.0.2"})
    assert client.get("/api/v1/me", headers=acme).status_code == 200


def test_another_tenants_key_sees_only_its_own_tenant(client, load):
    load(tenant_fixture("acme"), tenant_fixture("globex"))
    body = client.get("/api/v1/me", headers=auth_headers("sk_test_globex_token_0001")).get_json()
    assert body["tenant_id"] == "globex"


def test_failures_counted_by_another_process_block_here_within_a_second(client, app, acme, monkeypatch):
    from shop.platform.auth_failures import REFRESH_SECONDS, BlockedAddresses

    monkeypatch.setitem(app.config, "AUTH_FAILURES_PER_MINUTE", 3)
    if 60 - clock.timestamp() % 60 < 5:  # keep the whole test inside one clock minute
        clock.advance(6)
    assert client.get("/api/v1/me", headers=acme).status_code == 200
    other_process = BlockedAddresses()  # its own view, sharing only the database
    for _ in range(3):
        other_process.record("127.0.0.1", 3)
    clock.advance(REFRESH_SECONDS + 0.1)
    assert_error(client.get("/api/v1/me", headers=acme), 429, "rate_limited")

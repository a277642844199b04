"""GET /metrics: off without SHOP_METRICS_TOKEN, refused without it, and counters that move."""

import pytest

from shop import clock
from shop.platform import metrics
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.metrics import TOKEN, scrape, value

KEY = "sk_test_acme_token_0001"
SUBSCRIPTION = "whsub_3f9a2c1b7e8d4f6011223344"


@pytest.fixture
def metrics_on(app, monkeypatch):
    monkeypatch.setitem(app.config, "METRICS_TOKEN", TOKEN)


@pytest.fixture
def shop(load):
    load(
        tenant_fixture(
            "acme",
            webhook_subscriptions=[
                {"id": SUBSCRIPTION, "url": "https://hooks.example.com/x", "events": ["*"]}
            ],
        )
    )
    return auth_headers(KEY)


def test_off_without_a_token_it_is_the_unknown_route_404(client):
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    error = assert_error(response, 404, "not_found")
    unknown = client.get("/metricz").get_json()["error"]
    assert error["message"] == unknown["message"] and error["type"] == unknown["type"]


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Bearer wrong-token",
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN[:-1]}",
        f"Basic {TOKEN}",
        TOKEN,
        f"Bearer {KEY}",
        "Bearer \u00e9t\u00e9",
    ],
    ids=[
        "no header",
        "an empty header",
        "a scheme without a token",
        "a wrong token",
        "the token with a byte more",
        "the token with a byte less",
        "the token under another scheme",
        "the token without a scheme",
        "an API key instead",
        "a token that is not ASCII",
    ],
)
def test_refused_with_the_spec_401_without_the_right_token(client, metrics_on, shop, authorization):
    headers = {} if authorization is None else {"Authorization": authorization}
    response = client.get("/metrics", headers=headers)
    error = assert_error(response, 401, "unauthorized")
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert TOKEN not in response.get_data(as_text=True) and error["details"] is None


def test_other_methods_are_the_json_405(client, metrics_on):
    response = client.post("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert_error(response, 405, "method_not_allowed")


def test_request_counters_move_by_route_template_method_and_status(client, metrics_on, shop):
    before = scrape(client)
    for _ in range(3):
        assert client.get("/api/v1/me", headers=shop).status_code == 200
    assert client.get("/api/v1/appointments/123456", headers=shop).status_code == 404
    assert client.get("/api/v1/no/such/route/acme-secret-path").status_code == 404
    after = scrape(client)

    def moved(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("shop_http_requests_total", route="/api/v1/me", method="GET", status="200") == 3
    assert moved("shop_http_request_duration_seconds_count", route="/api/v1/me", method="GET") == 3
    assert moved("shop_http_request_duration_seconds_sum", route="/api/v1/me", method="GET") > 0
    # the template, never the id a client sent; a path no route knows is one series
    assert (
        moved("shop_http_requests_total", route="/api/v1/appointments/<id>", method="GET", status="404") == 1
    )
    assert moved("shop_http_requests_total", route="<unmatched>", method="GET", status="404") == 1


def test_rejections_are_counted_by_kind(client, app, metrics_on, shop, monkeypatch):
    before = scrape(client)
    monkeypatch.setitem(app.config, "RATE_LIMIT_CAPACITY", 1)
    monkeypatch.setitem(app.config, "RATE_LIMIT_REFILL", 0.001)
    monkeypatch.setitem(app.config, "AUTH_FAILURES_PER_MINUTE", 2)
    assert client.get("/api/v1/me", headers=shop).status_code == 200
    assert client.get("/api/v1/me", headers=shop).status_code == 429  # the key's bucket
    wrong = auth_headers("sk_test_wrong_token_0001")
    assert [client.get("/api/v1/me", headers=wrong).status_code for _ in range(3)] == [401, 401, 429]
    monkeypatch.setitem(app.config, "AUTH_FAILURES_PER_MINUTE", 10**9)  # let the scrape's address through
    after = scrape(client)
    assert value(after, "shop_auth_failures_total") - value(before, "shop_auth_failures_total") == 2
    for limit in ("key", "address"):
        moved = value(after, "shop_rate_limited_total", limit=limit) - value(
            before, "shop_rate_limited_total", limit=limit
        )
        assert moved == 1, limit


def test_queue_depth_and_oldest_due_age_are_read_at_scrape_time(client, metrics_on, shop):
    assert client.post(f"/api/v1/webhooks/{SUBSCRIPTION}/ping", headers=shop).status_code == 202
    clock.advance(120)
    samples = scrape(client)
    assert value(samples, "shop_database_up") == 1
    assert value(samples, "shop_webhook_deliveries_due") == 1
    assert 120 <= value(samples, "shop_webhook_oldest_due_age_seconds") < 125
    assert value(samples, "shop_queue_jobs_ready") >= 1  # the delivery's job, with no consumer to run it
    assert (
        value(samples, "shop_messages_due") == 0
        and value(samples, "shop_message_oldest_due_age_seconds") == 0
    )
    assert value(samples, "shop_consumers_running") == 0
    assert value(samples, "shop_consumer_heartbeat_age_seconds") == -1


def test_no_token_secret_or_tenant_in_the_output(client, app, metrics_on, shop):
    created = client.post(
        "/api/v1/webhooks", headers=shop, json={"url": "https://hooks.example.com/y", "events": ["*"]}
    )
    secret = created.get_json().get("signing_secret") if created.status_code == 201 else None
    client.get("/api/v1/me", headers=auth_headers("sk_test_wrong_token_0002"))
    text = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).get_data(as_text=True)
    for private in (
        TOKEN,
        KEY,
        "sk_test_wrong_token_0002",
        app.config["SECRET_KEY"],
        "acme",
        "key_acme",
        secret,
    ):
        assert not private or private not in text


def test_the_multiprocess_directory_defaults_to_the_instance_folder(app, metrics_on, client):
    scrape(client)
    folder = metrics.directory(app.config)
    assert folder.parent.samefile(app.instance_path) and folder.name == "metrics"
    assert any(folder.glob("counter_*.db"))


@pytest.fixture
def fresh_tally(app, monkeypatch):
    """A limit of 3 failures a minute, this process's view of blocked addresses new, one clock minute."""
    from shop.platform import auth
    from shop.platform.auth_failures import BlockedAddresses

    monkeypatch.setattr(auth, "blocked_addresses", BlockedAddresses())
    monkeypatch.setitem(app.config, "AUTH_FAILURES_PER_MINUTE", 3)
    if 60 - clock.timestamp() % 60 < 5:  # keep the whole test inside one clock minute
        clock.advance(6)


def test_wrong_tokens_count_as_failed_authentications_of_the_address(client, metrics_on, shop, fresh_tally):
    """Issue 23, item 4: the metrics token cannot be guessed without end."""
    wrong = {"Authorization": "Bearer guess-0001"}
    assert [client.get("/metrics", headers=wrong).status_code for _ in range(3)] == [401, 401, 401]
    right = {"Authorization": f"Bearer {TOKEN}"}
    response = client.get("/metrics", headers=right)
    assert_error(response, 429, "rate_limited")
    assert 1 <= int(response.headers["Retry-After"]) <= 61
    assert client.get("/api/v1/me", headers=shop).status_code == 429  # one tally per address
    other = {"REMOTE_ADDR": "127.0.0.2"}
    assert client.get("/metrics", headers=right, environ_base=other).status_code == 200


def test_bad_api_keys_and_wrong_metrics_tokens_share_the_tally(client, metrics_on, shop, fresh_tally):
    client.get("/api/v1/me", headers=auth_headers("sk_test_wrong"))
    client.get("/api/v1/me", headers=auth_headers("sk_test_wrong"))
    assert client.get("/metrics", headers={"Authorization": "Bearer guess"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 429

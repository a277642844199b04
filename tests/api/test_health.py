"""GET /api/v1/health tells the truth: the consumers' heartbeat and the oldest due work (issue 14)."""

from datetime import timedelta

import pytest

from shop import clock
from shop.domain import heartbeat
from shop.models import ConsumerHeartbeat, Message, WebhookDelivery
from tests.helpers import auth_headers, tenant_fixture

SUBSCRIPTION = "whsub_3f9a2c1b7e8d4f6011223344"
CHECKS = {"database", "queue", "consumer", "webhook_deliveries", "messages"}


def health(client) -> dict:
    response = client.get("/api/v1/health")
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


@pytest.fixture
def beating():
    """A consumer's heartbeat row, as a running consumer writes it."""
    consumer_id = heartbeat.new_consumer_id()
    heartbeat.beat(consumer_id, periodic=True, started_at=clock.now())
    return consumer_id


@pytest.fixture
def shop(load):
    """A tenant with a webhook subscription and a conversation to send in."""
    load(
        tenant_fixture(
            "acme",
            customers=[{"id": 1, "display_name": "Ann", "email": "ann@example.com"}],
            conversations=[{"id": 10, "customer_id": 1}],
            webhook_subscriptions=[
                {"id": SUBSCRIPTION, "url": "https://hooks.example.com/x", "events": ["*"]}
            ],
        )
    )
    return auth_headers("sk_test_acme_token_0001")


def test_with_no_consumer_ever_it_is_degraded_and_says_missing(client):
    body = health(client)
    assert body["status"] == "degraded"
    assert set(body["checks"]) == CHECKS
    assert body["checks"] == {
        "database": "ok",
        "queue": "ok",
        "consumer": "missing",
        "webhook_deliveries": "ok",
        "messages": "ok",
    }
    assert body["consumer"] == {
        "running": 0,
        "running_periodic": 0,
        "last_heartbeat_at": None,
        "last_heartbeat_age_seconds": None,
        "stale_after_seconds": 60.0,
    }


def test_a_fresh_heartbeat_and_no_due_work_is_ok(client, beating):
    body = health(client)
    assert body["status"] == "ok" and set(body["checks"].values()) == {"ok"}
    assert body["consumer"]["running"] == 1
    assert 0 <= body["consumer"]["last_heartbeat_age_seconds"] < 5
    assert body["backlog"]["webhook_deliveries"] == {
        "oldest_due_at": None,
        "oldest_due_age_seconds": None,
        "overdue_after_seconds": 300.0,
    }


def test_a_heartbeat_older_than_the_threshold_is_stale_with_its_age(client, beating):
    clock.advance(61)
    body = health(client)
    assert body["status"] == "degraded" and body["checks"]["consumer"] == "stale"
    assert body["consumer"]["running"] == 0
    assert 61 <= body["consumer"]["last_heartbeat_age_seconds"] < 66


def test_the_stale_threshold_is_a_setting(client, app, beating, monkeypatch):
    monkeypatch.setitem(app.config, "HEALTH_HEARTBEAT_STALE_SECONDS", 120)
    clock.advance(61)
    body = health(client)
    assert body["checks"]["consumer"] == "ok" and body["consumer"]["stale_after_seconds"] == 120


def test_consumers_that_all_skip_the_periodic_tasks_degrade_it(client, beating):
    heartbeat.beat(heartbeat.new_consumer_id(), periodic=False, started_at=clock.now())
    body = health(client)
    assert body["checks"]["consumer"] == "ok"
    assert (body["consumer"]["running"], body["consumer"]["running_periodic"]) == (2, 1)
    heartbeat.forget(beating)  # the one with the sweeps stops; the --no-periodic one runs on
    body = health(client)
    assert body["status"] == "degraded" and body["checks"]["consumer"] == "no_periodic"
    assert (body["consumer"]["running"], body["consumer"]["running_periodic"]) == (1, 0)


def test_a_stopped_consumer_forgets_its_row(client, beating):
    heartbeat.forget(beating)
    assert health(client)["checks"]["consumer"] == "missing"


def test_rows_of_consumers_gone_a_day_are_dropped_at_the_next_start(beating):
    clock.advance(timedelta(days=1, seconds=1).total_seconds())
    assert heartbeat.forget() == 1
    assert ConsumerHeartbeat.select().count() == 0


def test_an_overdue_delivery_shows_its_age_and_degrades(client, shop, beating):
    ping = client.post(f"/api/v1/webhooks/{SUBSCRIPTION}/ping", headers=shop)
    assert ping.status_code == 202
    due_at = WebhookDelivery.get_by_id(ping.get_json()["id"]).next_attempt_at
    clock.advance(600)
    heartbeat.beat(
        beating, periodic=True, started_at=clock.now()
    )  # the consumer is alive, the work is not done
    body = health(client)
    assert body["status"] == "degraded"
    assert body["checks"] == {**dict.fromkeys(CHECKS, "ok"), "webhook_deliveries": "overdue"}
    backlog = body["backlog"]["webhook_deliveries"]
    assert 600 <= backlog["oldest_due_age_seconds"] < 605
    assert backlog["oldest_due_at"] == clock.isoformat(due_at)


def test_due_work_younger_than_the_threshold_is_not_overdue(client, shop, beating):
    client.post(f"/api/v1/webhooks/{SUBSCRIPTION}/ping", headers=shop)
    clock.advance(30)
    heartbeat.beat(beating, periodic=True, started_at=clock.now())
    body = health(client)
    assert body["status"] == "ok"
    assert 30 <= body["backlog"]["webhook_deliveries"]["oldest_due_age_seconds"] < 35


def test_delivered_and_future_deliveries_are_not_due(client, shop, beating):
    ping = client.post(f"/api/v1/webhooks/{SUBSCRIPTION}/ping", headers=shop).get_json()
    WebhookDelivery.update(status="retrying", next_attempt_at=clock.now() + timedelta(hours=1)).execute()
    clock.advance(600)
    heartbeat.beat(beating, periodic=True, started_at=clock.now())
    assert health(client)["backlog"]["webhook_deliveries"]["oldest_due_at"] is None
    WebhookDelivery.update(status="delivered").where(WebhookDelivery.id == ping["id"]).execute()
    clock.advance(3600)
    heartbeat.beat(beating, periodic=True, started_at=clock.now())
    assert health(client)["status"] == "ok"


def outbound(status: str, **fields) -> Message:
    return Message.create(
        tenant="acme",
        conversation=10,
        channel="email",
        direction="outbound",
        body="Your phone is ready",
        recipient="ann@example.com",
        delivery_status=status,
        **fields,
    )


@pytest.mark.parametrize(
    ("status", "fields"),
    [
        ("queued", {"next_attempt_at": -900}),
        ("sending", {"next_attempt_at": -1200, "claimed_until": -900}),
    ],
    ids=["a queued message due 900 s ago", "a send whose claim ran out 900 s ago"],
)
def test_an_overdue_message_shows_its_age_and_degrades(client, shop, beating, status, fields):
    now = clock.now()
    outbound(status, **{name: now + timedelta(seconds=offset) for name, offset in fields.items()})
    body = health(client)
    assert body["status"] == "degraded" and body["checks"]["messages"] == "overdue"
    assert 900 <= body["backlog"]["messages"]["oldest_due_age_seconds"] < 905


def test_sent_messages_and_live_claims_are_not_due(client, shop, beating):
    now = clock.now()
    outbound("sent", next_attempt_at=now - timedelta(hours=1))
    outbound("sending", next_attempt_at=now - timedelta(hours=1), claimed_until=now + timedelta(minutes=5))
    body = health(client)
    assert body["checks"]["messages"] == "ok" and body["backlog"]["messages"]["oldest_due_at"] is None


def test_the_overdue_threshold_is_a_setting(client, app, shop, beating, monkeypatch):
    monkeypatch.setitem(app.config, "HEALTH_OVERDUE_SECONDS", 1000)
    outbound("queued", next_attempt_at=clock.now() - timedelta(seconds=900))
    body = health(client)
    assert body["status"] == "ok" and body["backlog"]["messages"]["overdue_after_seconds"] == 1000


def test_health_names_no_tenant_host_or_record(client, shop, beating):
    client.post(f"/api/v1/webhooks/{SUBSCRIPTION}/ping", headers=shop)
    text = client.get("/api/v1/health").get_data(as_text=True)
    for private in ("acme", SUBSCRIPTION, "whd_", beating):
        assert private not in text

"""Health with a real consumer process: degraded without one, ok with one, stale when it is killed."""

import signal
from datetime import timedelta

import pytest

from shop import clock
from shop.models import ConsumerHeartbeat, Message
from tests.helpers import tenant_fixture
from tests.helpers.processes import CONSUMERS, stop, wait_until

FAST = {"SHOP_CONSUMER_HEARTBEAT_SECONDS": "1"}


def health(client) -> dict:
    response = client.get("/api/v1/health")
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def test_degraded_with_no_consumer_then_ok_with_one_then_missing_when_it_stops(client, start_consumer):
    before = health(client)
    assert before["status"] == "degraded" and before["checks"]["consumer"] == "missing"
    consumer = start_consumer(**FAST)
    body = wait_until(lambda: (b := health(client))["status"] == "ok" and b, timeout=30)
    assert body["checks"]["consumer"] == "ok" and body["consumer"]["running"] == 1
    assert body["consumer"]["running_periodic"] == 1
    assert body["consumer"]["last_heartbeat_age_seconds"] < 5
    row = ConsumerHeartbeat.get()
    assert row.periodic is True and row.pid == consumer.pid
    first_beat = row.beat_at
    wait_until(lambda: ConsumerHeartbeat.get().beat_at > first_beat, timeout=10)  # it keeps beating
    stop(consumer)  # SIGTERM: a consumer stopped on purpose removes its row
    assert ConsumerHeartbeat.select().count() == 0
    assert health(client)["checks"]["consumer"] == "missing"


def test_a_killed_consumer_goes_stale(client, app, start_consumer, monkeypatch):
    monkeypatch.setitem(app.config, "HEALTH_HEARTBEAT_STALE_SECONDS", 3)
    consumer = start_consumer(**FAST)
    wait_until(lambda: health(client)["checks"]["consumer"] == "ok", timeout=30)
    consumer.send_signal(signal.SIGKILL)
    consumer.wait(timeout=10)
    body = wait_until(lambda: (b := health(client))["checks"]["consumer"] == "stale" and b, timeout=15)
    assert body["status"] == "degraded" and body["consumer"]["running"] == 0
    assert body["consumer"]["last_heartbeat_age_seconds"] >= 3


def test_every_consumer_beats_in_its_own_row(client, start_consumer):
    start_consumer(**FAST)
    start_consumer(**FAST)
    wait_until(lambda: health(client)["consumer"]["running"] == 2, timeout=30)
    assert ConsumerHeartbeat.select().count() == 2


@pytest.mark.parametrize("command", CONSUMERS)
def test_overdue_work_shows_its_age_until_a_consumer_does_it(client, load, start_consumer, command):
    load(
        tenant_fixture(
            "acme",
            customers=[{"id": 1, "display_name": "Ann", "email": "ann@example.com"}],
            conversations=[{"id": 10, "customer_id": 1}],
        )
    )
    Message.create(
        tenant="acme",
        conversation=10,
        channel="email",
        direction="outbound",
        body="Your phone is ready",
        recipient="ann@example.com",
        delivery_status="queued",
        next_attempt_at=clock.now() - timedelta(seconds=900),
    )
    before = health(client)
    assert before["checks"]["messages"] == "overdue"
    assert before["backlog"]["messages"]["oldest_due_age_seconds"] >= 900
    consumer = start_consumer(command, **FAST)  # it sweeps what is due as it starts, then beats
    # the message stops being due once the consumer claims it ("sending"), a moment before its send
    # is recorded: wait for both, the send and the health the consumer's heartbeat brings back to ok
    body = wait_until(
        lambda: Message.get().delivery_status == "logged" and (b := health(client))["status"] == "ok" and b,
        timeout=30,
    )
    assert body["backlog"]["messages"]["oldest_due_at"] is None
    assert ConsumerHeartbeat.get().pid == consumer.pid

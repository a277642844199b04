"""Issue 17 end to end: the real consumer, a real HTTPS receiver on loopback, the API reading the log."""

import json
import os
import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest

from shop import clock
from shop.domain.activity import run_activity
from shop.models import Notification, WebhookDelivery, WebhookDeliveryAttempt
from tests.helpers import tenant_fixture
from tests.helpers.processes import wait_until
from tests.helpers.webhook_receiver import WebhookReceiver

TRUSTED = "127.0.0.0/8,::1/128"
DNS_OVERRIDE = Path(__file__).resolve().parents[1] / "helpers" / "dns_override"


@pytest.fixture
def shop(load, app, monkeypatch):
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", TRUSTED)
    load(
        tenant_fixture(
            "acme", customers=[{"id": 1, "display_name": "Ann"}], conversations=[{"id": 10, "customer_id": 1}]
        )
    )
    return {"Authorization": "Bearer sk_test_acme_token_0001"}


def consumer_env(receiver, **extra) -> dict:
    return {
        "SHOP_WEBHOOK_CA_BUNDLE": receiver.ca_path,
        "SHOP_WEBHOOK_TRUSTED_NETWORKS": TRUSTED,
        "SHOP_WEBHOOK_RETRY_DELAYS": "0,0.3,0.3,0.3,0.3,0.3,0.3,0.3",
        "SHOP_WEBHOOK_TIMEOUT": "2",
        **extra,
    }


def dns_env(dns_file, env: dict) -> dict:
    """A consumer environment whose resolver answers from `dns_file` (tests/helpers/dns_override)."""
    path = os.pathsep.join(filter(None, [str(DNS_OVERRIDE), os.environ.get("PYTHONPATH")]))
    return {**env, "SHOP_TEST_DNS_FILE": str(dns_file), "PYTHONPATH": path}


def subscribe(client, headers, url) -> dict:
    response = client.post("/api/v1/webhooks", headers=headers, json={"url": url, "events": ["*"]})
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def inbound(body: str = "Hello") -> dict:
    return run_activity("message.received", "acme", {"conversation_id": 10, "channel": "sms", "body": body})


def attempts(client, headers, sub_id, delivery_id) -> list[dict]:
    response = client.get(f"/api/v1/webhooks/{sub_id}/deliveries/{delivery_id}/attempts", headers=headers)
    assert response.status_code == 200
    return response.get_json()["data"]


def test_a_500_then_200_delivery_shows_two_attempts(client, shop, tmp_path, start_consumer):
    with WebhookReceiver(tmp_path, script=[(500, {"error": "down for a moment"})]) as receiver:
        sub = subscribe(client, shop, receiver.hook_url())
        start_consumer(**consumer_env(receiver))
        inbound()
        wait_until(lambda: WebhookDelivery.get().status == "delivered", timeout=30)
    delivery = client.get(f"/api/v1/webhooks/{sub['id']}/deliveries/{WebhookDelivery.get().id}", headers=shop)
    assert delivery.get_json()["attempts"] == 2
    first, second = attempts(client, shop, sub["id"], WebhookDelivery.get().id)
    assert (first["response_status"], second["response_status"]) == (500, 200)
    assert (
        first["response_body"] == '{"error": "down for a moment"}'
        and second["response_body"] == '{"ok": true}'
    )
    assert first["duration_ms"] >= 0 and second["duration_ms"] >= 0
    assert (first["trigger"], second["trigger"]) == ("initial", "retry")
    assert first["address"] == second["address"] == "127.0.0.1"


def test_a_timeout_and_a_blocked_target_are_attempts_with_their_errors(
    client, shop, tmp_path, start_consumer
):
    dns = tmp_path / "dns.json"
    dns.write_text(json.dumps({"blocked.shop-test.example": "127.0.0.2"}))  # loopback, not trusted
    with WebhookReceiver(tmp_path, delay=3.0) as slow:
        slow_sub = subscribe(client, shop, slow.hook_url())
        blocked_sub = subscribe(client, shop, slow.hook_url("blocked.shop-test.example"))
        start_consumer(
            **dns_env(
                dns,
                consumer_env(
                    slow,
                    SHOP_WEBHOOK_TIMEOUT="1",
                    SHOP_WEBHOOK_TRUSTED_NETWORKS="127.0.0.1/32",
                    SHOP_WEBHOOK_RETRY_DELAYS="0,600,600,600,600,600,600,600",
                ),
            )
        )
        inbound()
        finished = WebhookDeliveryAttempt.select().where(WebhookDeliveryAttempt.status != "started")
        wait_until(lambda: finished.count() == 2, timeout=20)
        assert len(slow.events()) <= 1  # only the slow subscription's request arrived
    timed_out = WebhookDelivery.get(WebhookDelivery.subscription == slow_sub["id"])
    blocked = WebhookDelivery.get(WebhookDelivery.subscription == blocked_sub["id"])
    (slow_attempt,) = attempts(client, shop, slow_sub["id"], timed_out.id)
    (blocked_attempt,) = attempts(client, shop, blocked_sub["id"], blocked.id)
    assert slow_attempt["error"] == "timeout" and slow_attempt["address"] == "127.0.0.1"
    assert 900 <= slow_attempt["duration_ms"] < 3000 and slow_attempt["response_status"] is None
    assert blocked_attempt["error"].startswith("blocked target") and blocked_attempt["address"] is None
    assert blocked.status == "dead" and timed_out.status == "retrying"


def test_recover_resends_exactly_the_dead_deliveries_of_the_window(client, shop, tmp_path, start_consumer):
    with WebhookReceiver(tmp_path, default=(500, {"error": "down"})) as receiver:
        sub = subscribe(client, shop, receiver.hook_url())
        start_consumer(
            **consumer_env(receiver, SHOP_WEBHOOK_RETRY_DELAYS="0,0.05,0.05,0.05,0.05,0.05,0.05,0.05")
        )
        for i in range(4):
            inbound(f"Outage {i}")
        wait_until(lambda: WebhookDelivery.select().where(WebhookDelivery.status == "dead").count() == 4, 60)
        old = WebhookDelivery.select().order_by(WebhookDelivery.created_at).first()
        WebhookDelivery.update(created_at=clock.now() - timedelta(days=3)).where(
            WebhookDelivery.id == old.id
        ).execute()  # outside the window
        receiver.default = (200, {"ok": True})
        seen_before = len(receiver.events())
        window = {"since": clock.isoformat(clock.now() - timedelta(hours=1))}
        dry = client.post(
            f"/api/v1/webhooks/{sub['id']}/recover", headers=shop, json={**window, "dry_run": True}
        )
        assert dry.status_code == 202 and dry.get_json()["count"] == 3
        assert WebhookDelivery.select().where(WebhookDelivery.status == "dead").count() == 4
        real = client.post(f"/api/v1/webhooks/{sub['id']}/recover", headers=shop, json=window)
        assert real.status_code == 202 and real.get_json()["count"] == 3
        wait_until(
            lambda: WebhookDelivery.select().where(WebhookDelivery.status == "delivered").count() == 3, 30
        )
        time.sleep(0.5)
        resent = receiver.events()[seen_before:]
    recovered = {d.event_id for d in WebhookDelivery.select().where(WebhookDelivery.id != old.id)}
    assert sorted(item["body"]["id"] for item in resent) == sorted(recovered)  # same event ids, once each
    assert WebhookDelivery.get_by_id(old.id).status == "dead"
    log = attempts(client, shop, sub["id"], WebhookDelivery.get(WebhookDelivery.id != old.id).id)
    assert [a["trigger"] for a in log][-1] == "recover" and len(log) == 9


def test_stats_match_the_attempts_made(client, shop, tmp_path, start_consumer):
    script = [(503, {"error": "busy"})] * 2
    with WebhookReceiver(tmp_path, script=script) as receiver:
        sub = subscribe(client, shop, receiver.hook_url())
        start_consumer(**consumer_env(receiver))
        for i in range(4):
            inbound(f"m{i}")
        wait_until(
            lambda: WebhookDelivery.select().where(WebhookDelivery.status == "delivered").count() == 4, 30
        )
        assert len(receiver.events()) == 6
    stats = client.get(f"/api/v1/webhooks/{sub['id']}/stats?window=24h", headers=shop).get_json()
    assert (stats["attempts"], stats["delivered"], stats["failed"]) == (6, 4, 2)
    assert stats["success_rate"] == round(4 / 6, 4)
    durations = sorted(a.duration_ms for a in WebhookDeliveryAttempt.select())
    assert stats["p50_response_ms"] == durations[2] and stats["p95_response_ms"] == durations[5]
    assert stats["last_success_at"] is not None and stats["last_failure_at"] is not None


def test_a_410_disables_and_the_inbox_hears_of_it_once(client, shop, tmp_path, start_consumer):
    with WebhookReceiver(tmp_path, default=(410, {"error": "gone"})) as receiver:
        sub = subscribe(client, shop, receiver.hook_url())
        start_consumer(**consumer_env(receiver))
        for i in range(3):
            inbound(f"m{i}")
        wait_until(
            lambda: not client.get(f"/api/v1/webhooks/{sub['id']}", headers=shop).get_json()["enabled"]
        )
        wait_until(lambda: WebhookDelivery.select().where(WebhookDelivery.status == "dead").count() == 3)
        time.sleep(0.5)
        assert 1 <= len(receiver.events()) <= 3  # workers that had claimed one before the disable
    body = client.get(f"/api/v1/webhooks/{sub['id']}", headers=shop).get_json()
    assert "410 Gone" in body["last_error"] and body["disabled_at"] is not None
    inbox = client.get("/api/v1/notifications", headers=shop).get_json()["data"]
    assert [n["type"] for n in inbox] == ["webhook_disabled"]
    assert Notification.get().details["subscription_id"] == sub["id"]


def test_retry_after_is_honoured(client, shop, tmp_path, start_consumer):
    script = [(429, {"error": "slow down"}, {"Retry-After": "2"})]
    with WebhookReceiver(tmp_path, script=script) as receiver:
        subscribe(client, shop, receiver.hook_url())
        start_consumer(**consumer_env(receiver))
        inbound()
        wait_until(lambda: WebhookDelivery.get().status == "delivered", timeout=30)
    first, second = WebhookDeliveryAttempt.select().order_by(WebhookDeliveryAttempt.started_at)
    assert (first.response_status, second.response_status) == (429, 200)
    assert (second.started_at - first.finished_at).total_seconds() >= 2  # the table said 0.3 s
    assert WebhookDelivery.get().attempts == 2


def test_the_first_dead_delivery_of_the_day_reaches_the_inbox_once(client, shop, tmp_path, start_consumer):
    with WebhookReceiver(tmp_path, default=(500, {"error": "down"})) as receiver:
        subscribe(client, shop, receiver.hook_url())
        start_consumer(
            **consumer_env(receiver, SHOP_WEBHOOK_RETRY_DELAYS="0,0.05,0.05,0.05,0.05,0.05,0.05,0.05")
        )
        for i in range(3):
            inbound(f"m{i}")
        wait_until(lambda: WebhookDelivery.select().where(WebhookDelivery.status == "dead").count() == 3, 60)
    inbox = client.get("/api/v1/notifications", headers=shop).get_json()["data"]
    assert [n["type"] for n in inbox] == ["webhook_delivery_dead"]


def test_connections_are_reused_for_many_deliveries(client, shop, tmp_path, start_consumer):
    with WebhookReceiver(tmp_path, keep_alive=True) as receiver:
        subscribe(client, shop, receiver.hook_url())
        start_consumer(**consumer_env(receiver))
        for i in range(40):
            inbound(f"m{i}")
        wait_until(lambda: len(receiver.events()) == 40, timeout=60)
        connections = receiver.connections
        delivered = WebhookDelivery.select().where(WebhookDelivery.status == "delivered")
        wait_until(lambda: delivered.count() == 40)  # every outcome written
    assert connections <= 4  # one per worker thread at most, for 40 deliveries
    assert {a.address for a in WebhookDeliveryAttempt.select()} == {"127.0.0.1"}


def test_a_name_whose_dns_answer_turns_private_is_blocked(client, shop, tmp_path, start_consumer):
    dns = tmp_path / "dns.json"
    dns.write_text(json.dumps({"hooks.shop-test.example": "127.0.0.1"}))
    with WebhookReceiver(tmp_path, keep_alive=True, names=["hooks.shop-test.example"]) as receiver:
        sub = subscribe(client, shop, receiver.hook_url("hooks.shop-test.example"))
        start_consumer(**dns_env(dns, consumer_env(receiver, SHOP_WEBHOOK_TRUSTED_NETWORKS="127.0.0.1/32")))
        inbound("while public")
        wait_until(lambda: len(receiver.events()) == 1)
        dns.write_text(json.dumps({"hooks.shop-test.example": "127.0.0.2"}))  # now a loopback, untrusted
        inbound("after the change")
        wait_until(lambda: WebhookDelivery.select().where(WebhookDelivery.status == "dead").count() == 1)
        assert len(receiver.events()) == 1  # the kept connection to the old address was not used
    dead = WebhookDelivery.get(WebhookDelivery.status == "dead")
    (attempt,) = attempts(client, shop, sub["id"], dead.id)
    assert attempt["error"].startswith("blocked target") and attempt["address"] is None


def test_an_attempt_cut_off_by_a_killed_consumer_shows_and_counts(client, shop, tmp_path, start_consumer):
    with WebhookReceiver(tmp_path, delay=4.0) as receiver:
        sub = subscribe(client, shop, receiver.hook_url())
        first = start_consumer(**consumer_env(receiver, SHOP_WEBHOOK_TIMEOUT="8"))
        inbound()
        wait_until(lambda: WebhookDeliveryAttempt.select().count() == 1)
        time.sleep(0.5)  # the request is out, the receiver is still answering
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        delivery = WebhookDelivery.get()
        listed = client.get(f"/api/v1/webhooks/{sub['id']}/deliveries/{delivery.id}", headers=shop).get_json()
        assert listed["attempts"] == 1 and listed["status"] == "pending"
        (cut,) = attempts(client, shop, sub["id"], delivery.id)
        assert cut["status"] == "started" and cut["finished_at"] is None
        # a new consumer takes it again once the claim's hold (timeout + 5 s) has run out
        WebhookDelivery.update(claimed_until=clock.now() - timedelta(seconds=1)).execute()
        receiver.delay = 0
        start_consumer(**consumer_env(receiver))
        wait_until(lambda: WebhookDelivery.get().status == "delivered", timeout=90)
    log = attempts(client, shop, sub["id"], delivery.id)
    assert [(a["number"], a["status"]) for a in log] == [(1, "interrupted"), (2, "succeeded")]
    assert WebhookDelivery.get().attempts == 2


def test_many_attempts_answered_410_at_once_disable_once_and_never_deadlock(
    client, shop, tmp_path, start_consumer
):
    # the events queue first, then two consumers of 4 workers each start on them together: many
    # attempts end in a 410 at once, each disabling and dead-lettering beside the others
    with WebhookReceiver(tmp_path, default=(410, {"error": "gone"})) as receiver:
        sub = subscribe(client, shop, receiver.hook_url())
        for i in range(24):
            inbound(f"m{i}")
        for _ in range(2):
            start_consumer(**consumer_env(receiver))
        wait_until(lambda: WebhookDelivery.select().where(WebhookDelivery.status == "dead").count() == 24, 30)
        time.sleep(0.5)  # any job still running finishes (and would log its failure)
        sent = len(receiver.events())
    assert sent >= 1
    body = client.get(f"/api/v1/webhooks/{sub['id']}", headers=shop).get_json()
    assert body["enabled"] is False and "410 Gone" in body["last_error"]
    assert Notification.select().where(Notification.type == "webhook_disabled").count() == 1
    logs = "".join(path.read_text() for path in Path(os.environ["SHOP_INSTANCE_PATH"]).glob("consumer-*.log"))
    assert "deadlock" not in logs.lower() and "Traceback" not in logs, logs[-3000:]

"""Metrics across processes: the real consumer's attempts and sends reach the API's /metrics."""

import pytest

from shop.domain.activity import run_activity
from shop.models import Message, WebhookDelivery
from tests.helpers import auth_headers
from tests.helpers.messages import ANN_PHONE, shop_fixture
from tests.helpers.metrics import TOKEN, scrape, value
from tests.helpers.processes import wait_until
from tests.helpers.webhook_receiver import WebhookReceiver

TRUSTED = "127.0.0.0/8,::1/128"


@pytest.fixture
def shop(load, app, monkeypatch):
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", TRUSTED)
    monkeypatch.setitem(app.config, "METRICS_TOKEN", TOKEN)
    load(shop_fixture(conversations=[{"id": 10, "customer_id": 1}]))
    return auth_headers("sk_test_acme_token_0001")


def consumer_env(receiver) -> dict:
    return {
        "SHOP_METRICS_TOKEN": TOKEN,  # the consumer records only where metrics are on
        "SHOP_WEBHOOK_CA_BUNDLE": receiver.ca_path,
        "SHOP_WEBHOOK_TRUSTED_NETWORKS": TRUSTED,
        "SHOP_WEBHOOK_RETRY_DELAYS": "0,0.3,0.3,0.3,0.3,0.3,0.3,0.3",
        "SHOP_WEBHOOK_TIMEOUT": "2",
    }


def moved(before: dict, after: dict, name: str, **labels) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def test_a_real_delivery_and_a_retry_move_the_attempt_and_delivery_counters(
    client, shop, tmp_path, start_consumer
):
    before = scrape(client)
    with WebhookReceiver(tmp_path, script=[(500, {"error": "down"})]) as receiver:
        created = client.post(
            "/api/v1/webhooks", headers=shop, json={"url": receiver.hook_url(), "events": ["*"]}
        )
        assert created.status_code == 201
        start_consumer(**consumer_env(receiver))
        run_activity("message.received", "acme", {"conversation_id": 10, "channel": "sms", "body": "Hi"})
        wait_until(lambda: WebhookDelivery.get().status == "delivered", timeout=30)
    attempts = ("shop_webhook_attempts_total",)
    after = wait_until(
        lambda: (s := scrape(client)) and moved(before, s, *attempts, outcome="success") == 1 and s,
        timeout=10,
    )
    assert moved(before, after, *attempts, outcome="http_5xx") == 1
    assert moved(before, after, "shop_webhook_deliveries_total", outcome="retrying") == 1
    assert moved(before, after, "shop_webhook_deliveries_total", outcome="delivered") == 1
    latency = "shop_webhook_attempt_duration_seconds_count"
    assert moved(before, after, latency, outcome="success") == 1
    assert moved(before, after, latency, outcome="http_5xx") == 1
    text = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).get_data(as_text=True)
    assert created.get_json()["signing_secret"] not in text and "127.0.0.1" not in text


def test_a_real_send_moves_the_send_counter_by_channel_and_outcome(client, shop, tmp_path, start_consumer):
    before = scrape(client)
    body = {"ticket_id": "1001", "channel": "sms", "content": "Ready!", "to": ANN_PHONE}
    assert client.post("/api/v1/messages/send", headers=shop, json=body).status_code == 202
    start_consumer(SHOP_METRICS_TOKEN=TOKEN)  # no gateway configured: the log provider accepts
    wait_until(lambda: Message.get(Message.direction == "outbound").delivery_status == "sent", timeout=30)
    after = wait_until(
        lambda: (
            (s := scrape(client))
            and moved(before, s, "shop_message_sends_total", channel="sms", outcome="sent")
            and s
        ),
        timeout=10,
    )
    assert moved(before, after, "shop_message_sends_total", channel="sms", outcome="sent") == 1
    assert value(after, "shop_consumers_running") == 1  # the backlog gauges see the consumer's heartbeat

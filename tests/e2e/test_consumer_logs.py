"""The real consumer with SHOP_LOG_FORMAT=json: a line per delivery attempt and per send, no secrets."""

import json
import os
from pathlib import Path

import pytest

from shop.domain.activity import run_activity
from shop.models import Message, WebhookDelivery
from tests.helpers import auth_headers
from tests.helpers.messages import ANN_PHONE, shop_fixture
from tests.helpers.processes import wait_until
from tests.helpers.receivers import HttpReceiver
from tests.helpers.webhook_receiver import WebhookReceiver

TRUSTED = "127.0.0.0/8,::1/128"
BODY_MARKER = "Your phone is ready, secret pickup word PAPAYA-42"


@pytest.fixture
def shop(load, app, monkeypatch):
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", TRUSTED)
    load(shop_fixture(conversations=[{"id": 10, "customer_id": 1}]))
    return auth_headers("sk_test_acme_token_0001")


def consumer_lines() -> tuple[str, list[dict]]:
    """The consumer's whole output, and its lines that are JSON objects."""
    text = (Path(os.environ["SHOP_INSTANCE_PATH"]) / "consumer-0.log").read_text()
    parsed = []
    for line in text.splitlines():
        try:
            parsed.append(json.loads(line))
        except ValueError:
            continue
    return text, parsed


def test_json_lines_for_each_attempt_and_send_without_secrets(client, shop, tmp_path, start_consumer):
    script = [(500, {"busy": True})]  # the first attempt fails, the retry succeeds
    with WebhookReceiver(tmp_path, script=script) as receiver, HttpReceiver() as gateway:
        subscription = {"url": receiver.hook_url(), "events": ["message.received"]}
        created = client.post("/api/v1/webhooks", headers=shop, json=subscription).get_json()
        start_consumer(
            SHOP_LOG_FORMAT="json",
            SHOP_WEBHOOK_CA_BUNDLE=receiver.ca_path,
            SHOP_WEBHOOK_TRUSTED_NETWORKS=TRUSTED,
            SHOP_WEBHOOK_RETRY_DELAYS="0,0.3,0.3,0.3,0.3,0.3,0.3,0.3",
            SHOP_SMS_GATEWAY_URL=gateway.url,
        )
        run_activity("message.received", "acme", {"conversation_id": 10, "channel": "sms", "body": "Hi"})
        body = {"ticket_id": "1001", "channel": "sms", "content": BODY_MARKER, "to": ANN_PHONE}
        assert client.post("/api/v1/messages/send", headers=shop, json=body).status_code == 202
        wait_until(lambda: WebhookDelivery.get().status == "delivered")
        wait_until(lambda: Message.get(Message.direction == "outbound").delivery_status == "sent")
        signatures = [e["headers"]["Service-Signature"] for e in receiver.events()]
        text, lines = wait_until(lambda: _with_lines(("webhook_attempt", 2), ("message_send", 1)))
    delivery, message = WebhookDelivery.get(), Message.get(Message.direction == "outbound")
    attempts = [line for line in lines if line.get("event") == "webhook_attempt"]
    assert [(a["attempt"], a["outcome"], a["status_code"]) for a in attempts] == [
        (1, "retrying", 500),
        (2, "delivered", 200),
    ]
    for line in attempts:
        assert line["delivery_id"] == delivery.id and line["subscription_id"] == created["id"]
        assert line["tenant"] == "acme" and line["event_type"] == "message.received"
        assert line["attempt_id"].startswith("whatt_") and isinstance(line["duration_ms"], int)
        assert line["logger"] == "shop.webhooks" and line["time"].endswith("+00:00")
    assert attempts[0]["level"] == "WARNING" and attempts[1]["level"] == "INFO"
    (send,) = [line for line in lines if line.get("event") == "message_send"]
    assert send["message_id"] == message.id and send["outcome"] == "sent" and send["channel"] == "sms"
    assert send["tenant"] == "acme" and send["error"] is None and send["duration_ms"] >= 0
    # nothing secret or private in the whole output, JSON or not
    assert created["signing_secret"] not in text and "sk_test_acme_token_0001" not in text
    assert all(sig.split("v1=")[1] not in text for sig in signatures)
    assert BODY_MARKER not in text and ANN_PHONE not in text
    assert "Enqueueing periodic task" not in text  # the scheduler's chatter is DEBUG


def _with_lines(*wanted) -> tuple[str, list[dict]] | None:
    """The consumer's output once it holds at least `count` lines of each event."""
    text, lines = consumer_lines()
    for event, count in wanted:
        if sum(1 for line in lines if line.get("event") == event) < count:
            return None
    return text, lines

"""Sends go through the real consumer to a real SMTP server and a local SMS gateway."""

import json
import os
import signal
import time
from collections import Counter
from email import message_from_bytes
from pathlib import Path

import pytest

from shop.domain.messaging import delivery
from shop.models import Event, Message
from tests.helpers import auth_headers
from tests.helpers.messages import ANN_PHONE, shop_fixture
from tests.helpers.processes import wait_until
from tests.helpers.receivers import HttpReceiver, SmtpSink
from tests.helpers.twilio_api import FakeTwilio, created, twilio_error
from tests.inbound.conftest import PUBLIC_URL, SHOP_NUMBER, TWILIO_TOKEN, post_twilio

FAST_RETRIES = {"SHOP_SEND_RETRY_DELAYS": "0.3,0.3,0.3"}
STATUS_PATH = "/inbound/sms/twilio/status"


@pytest.fixture
def shop(load):
    load(shop_fixture())
    return auth_headers("sk_test_acme_token_0001")


def delivered(status="sent"):
    message = Message.get_or_none(Message.direction == "outbound")
    return message is not None and message.delivery_status == status


def send_sms(client, headers):
    body = {"ticket_id": "1001", "channel": "sms", "content": "Ready!", "to": ANN_PHONE}
    assert client.post("/api/v1/messages/send", headers=headers, json=body).status_code == 202


def test_email_reaches_the_smtp_server(client, shop, start_consumer):
    with SmtpSink() as sink:
        start_consumer(SHOP_SMTP_URL=sink.url, **FAST_RETRIES)
        response = client.post(
            "/api/v1/messages/send",
            headers=shop,
            json={"ticket_id": "1001", "channel": "email", "body": "Your phone is ready.\nSee you soon."},
        )
        assert response.status_code == 202
        wait_until(delivered)
        assert len(sink.messages) == 1
    envelope = sink.messages[0]
    assert envelope.rcpt_tos == ["Ann@Example.com"]
    mime = message_from_bytes(envelope.content)
    assert mime["Subject"] == "Ticket #1001: Cracked screen"
    assert mime["To"] == "Ann@Example.com"
    assert mime.get_content_type() == "text/plain"
    text = mime.get_payload(decode=True).decode().replace("\r\n", "\n").strip()
    assert text == "Your phone is ready.\nSee you soon."
    message = Message.get(Message.direction == "outbound")
    assert message.external_uuid and mime["Message-ID"].strip("<>") == message.external_uuid
    events = [e for e in Event.select() if e.type == "message.sent"]
    assert len(events) == 1 and events[0].data["id"] == message.id


def test_sms_reaches_the_gateway_with_the_provider_id_stored(client, shop, start_consumer):
    with HttpReceiver(default=(200, {"id": "gw-777"})) as gateway:
        start_consumer(SHOP_SMS_GATEWAY_URL=gateway.url, **FAST_RETRIES)
        send_sms(client, shop)
        wait_until(delivered)
        assert len(gateway.requests) == 1
    sent = json.loads(gateway.requests[0]["body"])
    assert sent["to"] == ANN_PHONE and sent["body"] == "Ready!"
    message = Message.get(Message.direction == "outbound")
    assert message.external_uuid == "gw-777" and sent["reference"] == str(message.id)
    assert Event.select().where(Event.type == "message.sent").count() == 1


def test_a_gateway_that_fails_twice_then_succeeds_delivers_once(client, shop, start_consumer):
    script = [(500, {"error": "busy"}), (503, {"error": "down"})]
    with HttpReceiver(script=script, default=(200, {"id": "gw-3rd"})) as gateway:
        start_consumer(SHOP_SMS_GATEWAY_URL=gateway.url, **FAST_RETRIES)
        send_sms(client, shop)
        wait_until(delivered)
        assert len(gateway.requests) == 3
    message = Message.get(Message.direction == "outbound")
    assert message.delivery_attempts == 3 and message.external_uuid == "gw-3rd"
    assert Message.select().count() == 1
    assert Event.select().where(Event.type == "message.sent").count() == 1


def test_a_permanent_refusal_is_recorded_and_logged(client, shop, start_consumer):
    with HttpReceiver(default=(400, {"error": "invalid number"})) as gateway:
        start_consumer(SHOP_SMS_GATEWAY_URL=gateway.url, **FAST_RETRIES)
        send_sms(client, shop)
        wait_until(lambda: delivered("failed"))
        assert len(gateway.requests) == 1
    message = Message.get(Message.direction == "outbound")
    assert "400" in message.delivery_error
    assert Event.select().where(Event.type == "message.sent").count() == 0
    logs = "".join(path.read_text() for path in Path(os.environ["SHOP_INSTANCE_PATH"]).glob("consumer-*.log"))
    assert f"message {message.id} to sms failed permanently" in logs


def test_without_providers_the_log_provider_accepts(client, shop, consumer):
    client.post(
        "/api/v1/messages/send", headers=shop, json={"ticket_id": "1001", "channel": "email", "body": "Hi"}
    )
    wait_until(lambda: delivered("logged"))  # the log provider: nothing left the machine (issue 26)
    assert Message.get(Message.direction == "outbound").external_uuid.startswith("log_")


def test_a_lost_enqueue_is_recovered_by_the_sweep(client, shop, start_consumer):
    from tasks import huey
    from tasks.messages import sweep_messages

    client.post(
        "/api/v1/messages/send", headers=shop, json={"ticket_id": "1001", "channel": "email", "body": "Hi"}
    )
    huey.flush()  # the enqueued job is lost (no consumer was running, the queue was wiped)
    with SmtpSink() as sink:
        start_consumer(SHOP_SMTP_URL=sink.url)
        sweep_messages()  # what the consumer's scheduler runs every minute
        wait_until(delivered)
        assert len(sink.messages) == 1


def test_smtp_connections_are_reused_and_renewed_when_stale(client, shop, start_consumer):
    def send_and_wait(count):
        client.post(
            "/api/v1/messages/send",
            headers=shop,
            json={"ticket_id": "1001", "channel": "email", "body": f"Message {count}"},
        )
        wait_until(lambda: Message.select().where(Message.delivery_status == "sent").count() == count)

    first = SmtpSink()
    with first:
        start_consumer(SHOP_SMTP_URL=first.url, SHOP_CONSUMER_WORKERS="1")
        for count in (1, 2, 3):
            send_and_wait(count)
        assert len(first.messages) == 3 and first.sessions == 1
    with SmtpSink(port=first.port) as second:  # the server restarted: the kept connection is dead
        send_and_wait(4)
        assert len(second.messages) == 1
    assert Event.select().where(Event.type == "message.sent").count() == 4


def test_non_ascii_subject_and_body_arrive_intact(client, shop, start_consumer):
    from email.header import decode_header, make_header

    with SmtpSink() as sink:
        start_consumer(SHOP_SMTP_URL=sink.url)
        client.post(
            "/api/v1/messages/send",
            headers=shop,
            json={
                "ticket_id": "1001",
                "channel": "email",
                "subject": "Réparation prête ✓",
                "body": "Voilà, c'est prêt ✓",
            },
        )
        wait_until(delivered)
    mime = message_from_bytes(sink.messages[0].content)
    assert str(make_header(decode_header(mime["Subject"]))) == "Réparation prête ✓"
    assert mime.get_content_charset() == "utf-8"
    assert mime.get_payload(decode=True).decode("utf-8") == "Voilà, c'est prêt ✓"


def test_killing_the_consumer_mid_burst_loses_no_message(client, load, start_consumer):
    load(shop_fixture(send_rate_per_minute=1000))
    headers = auth_headers("sk_test_acme_token_0001")
    with SmtpSink(delay=0.02) as sink:  # a server slow enough for the kill to land mid-batch
        env = {"SHOP_SMTP_URL": sink.url, "SHOP_SEND_CLAIM_SECONDS": "2"}
        first = start_consumer(**env)
        for i in range(60):
            body = {"ticket_id": "1001", "channel": "email", "body": f"Burst {i}"}
            assert client.post("/api/v1/messages/send", headers=headers, json=body).status_code == 202
        wait_until(lambda: len(sink.messages) >= 10, timeout=60)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        halfway = len(sink.messages)
        start_consumer(**env)  # its start-up sweep, and again once the killed one's claims lapsed
        sent = Message.select().where(Message.delivery_status == "sent")
        wait_until(lambda: sent.count() == 60, timeout=90)
        received = Counter(
            message_from_bytes(e.content).get_payload(decode=True).decode() for e in sink.messages
        )
    assert halfway < 60  # the kill really happened mid-burst
    assert set(received) == {f"Burst {i}" for i in range(60)}  # every message reached the server
    # only messages the server accepted while the killed worker had not yet recorded them are sent
    # twice: at most one batch per worker thread
    assert sum(count - 1 for count in received.values()) <= 4 * delivery.BATCH
    assert Event.select().where(Event.type == "message.sent").count() == 60


@pytest.fixture
def twilio_shop(load, app, monkeypatch):
    """acme on its own number; the web app takes Twilio's signed status callbacks."""
    load(shop_fixture(sms_numbers=[SHOP_NUMBER]))
    monkeypatch.setitem(app.config, "TWILIO_AUTH_TOKEN", TWILIO_TOKEN)
    monkeypatch.setitem(app.config, "PUBLIC_URL", PUBLIC_URL)
    return auth_headers("sk_test_acme_token_0001")


def twilio_consumer(start_consumer, twilio, **extra):
    """A consumer sending SMS through the fake Twilio, trusting its CA (`extra`: settings over them)."""
    settings = twilio.settings(PUBLIC_URL=PUBLIC_URL, **extra)
    env = {f"SHOP_{name}": value for name, value in settings.items()}
    return start_consumer(**env, REQUESTS_CA_BUNDLE=twilio.ca_path, **FAST_RETRIES)


def test_sms_through_twilio_reads_sent_then_delivered_by_its_callback(
    client, twilio_shop, start_consumer, tmp_path
):
    with FakeTwilio(tmp_path, script=[created("SM" + "e" * 32)]) as twilio:
        twilio_consumer(start_consumer, twilio)
        send_sms(client, twilio_shop)
        wait_until(delivered)
    assert twilio.forms == [
        {"To": ANN_PHONE, "From": SHOP_NUMBER, "Body": "Ready!", "StatusCallback": PUBLIC_URL + STATUS_PATH}
    ]
    message = Message.get(Message.direction == "outbound")
    assert message.external_uuid == "SM" + "e" * 32
    params = {"MessageSid": message.external_uuid, "MessageStatus": "delivered", "AccountSid": twilio.sid}
    assert post_twilio(client, STATUS_PATH, params).status_code == 200
    assert delivered("delivered")
    assert Event.select().where(Event.type == "message.sent").count() == 1


def test_twilio_failing_then_accepting_delivers_once(client, twilio_shop, start_consumer, tmp_path):
    script = [twilio_error(500, 20500, "Internal Server Error"), created("SM-after-500")]
    with FakeTwilio(tmp_path, script=script) as twilio:
        twilio_consumer(start_consumer, twilio)
        send_sms(client, twilio_shop)
        wait_until(delivered)
    message = Message.get(Message.direction == "outbound")
    assert (message.external_uuid, message.delivery_attempts, len(twilio.forms)) == ("SM-after-500", 2, 2)
    assert Event.select().where(Event.type == "message.sent").count() == 1


def test_twilio_refusing_the_credentials_fails_the_message_once(
    client, twilio_shop, start_consumer, tmp_path
):
    with FakeTwilio(tmp_path) as twilio:
        twilio_consumer(start_consumer, twilio, TWILIO_AUTH_TOKEN="not-the-token")
        send_sms(client, twilio_shop)
        wait_until(lambda: delivered("failed"))
        time.sleep(1)  # three retry delays' worth: nothing more arrives
        assert twilio.requests == 1
    assert "Twilio answered 401, error 20003" in Message.get(Message.direction == "outbound").delivery_error
    logs = "".join(path.read_text() for path in Path(os.environ["SHOP_INSTANCE_PATH"]).glob("consumer-*.log"))
    assert "failed permanently" in logs and "not-the-token" not in logs and "Ready!" not in logs

"""Inbound SMS through Twilio's and the gateway's webhooks: recorded once, notified, refused cleanly."""

import json
import threading

import pytest

from shop.models import Conversation, Event, Message, Notification
from tasks import huey
from tests.helpers import assert_error
from tests.helpers.messages import ANN_PHONE
from tests.inbound.conftest import (
    GLOBEX_NUMBER,
    PUBLIC_URL,
    SHOP_NUMBER,
    STRANGER,
    gateway_signature,
    gateway_sms,
    post_gateway,
    post_twilio,
    twilio_signature,
    twilio_sms,
)

RACERS = 6


def nothing_recorded():
    return (
        Message.select().count() == 0 and Event.select().count() == 0 and Notification.select().count() == 0
    )


def test_gateway_sms_lands_in_the_customers_conversation_with_event_and_notification(client, shop):
    response = post_gateway(
        client, "/inbound/sms/gateway", gateway_sms(media_urls=["https://m.example/1.jpg"])
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    receipt = response.get_json()
    assert receipt == {
        "object": "inbound_receipt",
        "message_id": receipt["message_id"],
        "duplicate": False,
        "reply": None,
    }
    conversation = client.get("/api/v1/messages/conversations", headers=shop).get_json()["data"][0]
    assert conversation["customer_id"] == 1 and conversation["unread_count"] == 1
    assert conversation["last_inbound_at"] is not None
    messages = client.get(f"/api/v1/messages/conversations/{conversation['id']}/messages", headers=shop)
    message = messages.get_json()["data"][0]
    assert (message["id"], message["direction"], message["body"], message["sender"]) == (
        receipt["message_id"],
        "inbound",
        "Is it ready?",
        ANN_PHONE,
    )
    assert message["media_urls"] == ["https://m.example/1.jpg"] and message["delivery_status"] is None
    event = Event.get(Event.type == "message.received")
    assert event.tenant_id == "acme" and event.data["id"] == message["id"]
    inbox = client.get("/api/v1/notifications", headers=shop).get_json()["data"]
    assert [n["type"] for n in inbox] == ["message_received"]
    assert inbox[0]["details"] == {
        "conversation_id": conversation["id"],
        "message_id": message["id"],
        "channel": "sms",
    }


def test_a_gateway_retry_records_nothing_twice(client, shop):
    first = post_gateway(client, "/inbound/sms/gateway", gateway_sms()).get_json()
    again = post_gateway(client, "/inbound/sms/gateway", gateway_sms())
    assert again.status_code == 200
    assert again.get_json() == {**first, "duplicate": True}
    assert Message.select().count() == 1 and Notification.select().count() == 1
    assert Event.select().where(Event.type == "message.received").count() == 1


def test_gateway_retries_racing_each_other_record_one_message(app, shop):
    """Posts of one message at once, each from its own thread (and so its own database connection):
    one records it, every other answers the same message as a duplicate (on PostgreSQL a retry that
    read no message before the first committed loses the insert on the unique key)."""
    barrier, answers, lock = threading.Barrier(RACERS), [], threading.Lock()

    def one():
        client = app.test_client()
        barrier.wait(timeout=10)
        response = post_gateway(client, "/inbound/sms/gateway", gateway_sms(id="gw-race"))
        with lock:
            answers.append((response.status_code, response.get_json()))

    threads = [threading.Thread(target=one) for _ in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert [status for status, _ in answers] == [200] * RACERS, answers
    assert len({body["message_id"] for _, body in answers}) == 1
    assert sorted(body["duplicate"] for _, body in answers) == [False] + [True] * (RACERS - 1)
    assert Message.select().count() == 1 and Notification.select().count() == 1
    assert Event.select().where(Event.type == "message.received").count() == 1


def test_twilio_sms_signed_over_the_public_url_with_media(client, shop):
    params = twilio_sms(
        NumMedia="2", MediaUrl0="https://api.twilio.com/m/1", MediaUrl1="https://api.twilio.com/m/2"
    )
    response = post_twilio(client, "/inbound/sms/twilio", params)
    assert response.status_code == 200 and response.mimetype == "text/xml"
    assert response.get_data(as_text=True) == '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'
    message = Message.get()
    assert message.media_urls == ["https://api.twilio.com/m/1", "https://api.twilio.com/m/2"]
    assert message.external_uuid == "SM0001" and message.conversation.customer_id == 1
    assert post_twilio(client, "/inbound/sms/twilio", params).status_code == 200  # Twilio retries
    assert Message.select().count() == 1


def test_twilio_without_a_public_url_signs_the_url_as_reached(client, shop, app, monkeypatch):
    monkeypatch.setitem(app.config, "PUBLIC_URL", None)
    params = twilio_sms()
    response = post_twilio(client, "/inbound/sms/twilio", params, url="http://localhost/inbound/sms/twilio")
    assert response.status_code == 200


def test_an_unknown_sender_gets_one_unlinked_conversation(client, shop):
    post_gateway(client, "/inbound/sms/gateway", gateway_sms(id="a", sender=STRANGER))
    post_gateway(client, "/inbound/sms/gateway", gateway_sms(id="b", sender=STRANGER))
    assert Conversation.select().count() == 1
    conversation = Conversation.get()
    assert conversation.customer_id is None and Message.select().count() == 2


def test_the_number_finds_the_tenant(client, shop):
    post_gateway(client, "/inbound/sms/gateway", gateway_sms(to=GLOBEX_NUMBER))
    assert Message.get().tenant_id == "globex" and Conversation.get().customer_id is None


@pytest.mark.parametrize(
    "signature",
    [None, "", "t=1,v1=00", "v1=abc", "t=notanumber,v1=abc", "garbage"],
    ids=["missing", "empty", "wrong digest", "no timestamp", "bad timestamp", "garbage"],
)
def test_gateway_bad_signatures_are_403(client, shop, signature):
    response = post_gateway(client, "/inbound/sms/gateway", gateway_sms(), signature=signature)
    assert_error(response, 403, "forbidden")
    assert nothing_recorded()


def test_gateway_signatures_older_than_five_minutes_or_of_another_secret_are_403(client, shop):
    body = json.dumps(gateway_sms()).encode()
    stale = gateway_signature(body, timestamp=int(__import__("time").time()) - 301)
    assert_error(
        post_gateway(client, "/inbound/sms/gateway", None, signature=stale, raw=body), 403, "forbidden"
    )
    other = gateway_signature(body, secret="another")
    assert_error(
        post_gateway(client, "/inbound/sms/gateway", None, signature=other, raw=body), 403, "forbidden"
    )
    assert nothing_recorded()


@pytest.mark.parametrize(
    "how",
    ["missing", "wrong token", "other url", "param changed"],
)
def test_twilio_bad_signatures_are_403(client, shop, how):
    params = twilio_sms()
    signature = {
        "missing": None,
        "wrong token": twilio_signature(PUBLIC_URL + "/inbound/sms/twilio", params, token="nope"),
        "other url": twilio_signature("https://evil.example/inbound/sms/twilio", params),
        "param changed": twilio_signature(PUBLIC_URL + "/inbound/sms/twilio", {**params, "Body": "other"}),
    }[how]
    assert_error(post_twilio(client, "/inbound/sms/twilio", params, signature=signature), 403, "forbidden")
    assert nothing_recorded()


def test_unknown_numbers_are_404_naming_the_field(client, shop):
    assert_error(
        post_gateway(client, "/inbound/sms/gateway", gateway_sms(to="+15555551234")), 404, "not_found", "to"
    )
    params = twilio_sms(to="+15555551234")
    assert_error(post_twilio(client, "/inbound/sms/twilio", params), 404, "not_found", "To")
    assert nothing_recorded()


@pytest.mark.parametrize(
    "path,setting",
    [
        ("/inbound/sms/gateway", "SMS_GATEWAY_SECRET"),
        ("/inbound/sms/gateway/status", "SMS_GATEWAY_SECRET"),
        ("/inbound/sms/twilio", "TWILIO_AUTH_TOKEN"),
        ("/inbound/sms/twilio/status", "TWILIO_AUTH_TOKEN"),
    ],
)
def test_each_route_is_off_while_its_secret_is_unset(client, shop, app, monkeypatch, path, setting):
    monkeypatch.setitem(app.config, setting, None)
    assert_error(client.post(path, data="{}", content_type="application/json"), 404, "not_found")


GATEWAY_BAD_BODIES = [
    ("not json", b"{nope", 400, "invalid_json", None),
    ("an array", b"[]", 400, "invalid_json", None),
    ("no id", {"from": ANN_PHONE, "to": SHOP_NUMBER, "body": "x"}, 400, "missing_field", "id"),
    ("id an object", {**gateway_sms(), "id": {"a": 1}}, 400, "invalid_field", "id"),
    ("id a boolean", {**gateway_sms(), "id": True}, 400, "invalid_field", "id"),
    ("from not E.164", gateway_sms(sender="555-0100"), 400, "invalid_field", "from"),
    ("from an array", {**gateway_sms(), "from": [ANN_PHONE]}, 400, "invalid_field", "from"),
    ("to missing", {k: v for k, v in gateway_sms().items() if k != "to"}, 400, "missing_field", "to"),
    ("body a number", {**gateway_sms(), "body": 5}, 400, "invalid_field", "body"),
    ("body too long", gateway_sms(body="x" * 10_001), 400, "invalid_field", "body"),
    ("body with NUL", gateway_sms(body="a\x00b"), 400, "invalid_field", "body"),
    ("body with a control character", gateway_sms(body="a\x1bb"), 400, "invalid_field", "body"),
    ("media_urls a string", {**gateway_sms(), "media_urls": "x"}, 400, "invalid_field", "media_urls"),
    ("media_urls of numbers", {**gateway_sms(), "media_urls": [1]}, 400, "invalid_field", "media_urls"),
    ("huge", gateway_sms(body="x" * 300_000), 413, "payload_too_large", None),
]


@pytest.mark.parametrize(
    "payload,status,code,param",
    [case[1:] for case in GATEWAY_BAD_BODIES],
    ids=[case[0] for case in GATEWAY_BAD_BODIES],
)
def test_gateway_bad_bodies_are_refused_with_nothing_stored(client, shop, payload, status, code, param):
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    assert_error(post_gateway(client, "/inbound/sms/gateway", None, raw=raw), status, code, param)
    assert nothing_recorded()


def test_gateway_wrong_content_type_is_415(client, shop):
    body = json.dumps(gateway_sms()).encode()
    response = client.post(
        "/inbound/sms/gateway",
        data=body,
        headers={"Service-Signature": gateway_signature(body)},
        content_type="text/plain",
    )
    assert_error(response, 415, "unsupported_media_type")
    assert nothing_recorded()


TWILIO_BAD_FORMS = [
    (
        "no MessageSid",
        {k: v for k, v in twilio_sms().items() if k != "MessageSid"},
        "missing_field",
        "MessageSid",
    ),
    ("From not a number", twilio_sms(sender="anonymous"), "invalid_field", "From"),
    ("NumMedia not a number", twilio_sms(NumMedia="many"), "invalid_field", "NumMedia"),
    ("NumMedia beyond the URLs", twilio_sms(NumMedia="1"), "missing_field", "MediaUrl0"),
    ("Body with NUL", twilio_sms(body="a\x00b"), "invalid_field", "Body"),
]


@pytest.mark.parametrize(
    "params,code,param", [case[1:] for case in TWILIO_BAD_FORMS], ids=[case[0] for case in TWILIO_BAD_FORMS]
)
def test_twilio_bad_forms_are_400(client, shop, params, code, param):
    assert_error(post_twilio(client, "/inbound/sms/twilio", params), 400, code, param)
    assert nothing_recorded()


def test_twilio_huge_form_is_413(client, shop):
    params = twilio_sms(body="x" * 300_000)
    assert_error(post_twilio(client, "/inbound/sms/twilio", params), 413, "payload_too_large")
    assert nothing_recorded()


def test_twilio_json_is_415(client, shop):
    response = client.post("/inbound/sms/twilio", json=twilio_sms(), headers={"X-Twilio-Signature": "x"})
    assert_error(response, 415, "unsupported_media_type")


def test_inbound_routes_need_no_api_key_and_refuse_get(client, shop):
    assert_error(client.get("/inbound/sms/gateway"), 405, "method_not_allowed")
    assert huey.pending_count() == 0

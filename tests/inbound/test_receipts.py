"""Delivery receipts from Twilio and the gateway: forward only, failures notified, opt-outs suppressed."""

import itertools

import pytest

from shop.domain.messaging import delivery
from shop.models import Customer, Message, Notification, Suppression
from tests.helpers import assert_error
from tests.helpers.messages import ANN_PHONE, send
from tests.helpers.receivers import HttpReceiver
from tests.inbound.conftest import SHOP_NUMBER, post_gateway, post_twilio


@pytest.fixture
def sent(client, shop, app):
    """Send an SMS to Ann through a real (loopback) gateway that answers with `gateway_id`; the
    message's id."""

    def go(gateway_id="gw-out-1"):
        response = send(client, shop, ticket_id="1001", channel="sms", content="Ready", to=ANN_PHONE)
        message_id = response.get_json()["message_id"]
        with HttpReceiver(default=(200, {"id": gateway_id})) as gateway:
            delivery.attempt(message_id, {**app.config, "SMS_GATEWAY_URL": gateway.url})
        assert gateway.requests and b'"from": "+15555550000"' in gateway.requests[0]["body"]
        return message_id

    return go


def gateway_status(client, id, status, error_code=None):
    body = {"id": id, "status": status}
    if error_code is not None:
        body["error_code"] = error_code
    return post_gateway(client, "/inbound/sms/gateway/status", body)


def status_of(client, shop, message_id):
    message = client.get(f"/api/v1/messages/{message_id}", headers=shop).get_json()
    return message["delivery_status"], message["delivery_error"]


def failures():
    return Notification.select().where(Notification.type == "message_failed").count()


def test_the_send_result_names_the_message_which_reads_sent_then_delivered(client, shop, sent):
    message_id = sent()
    assert status_of(client, shop, message_id) == ("sent", None)
    message = client.get(f"/api/v1/messages/{message_id}", headers=shop).get_json()
    assert message["to"] == ANN_PHONE and message["sender"] == SHOP_NUMBER
    response = gateway_status(client, "gw-out-1", "delivered")
    assert response.status_code == 200
    assert response.get_json() == {
        "object": "delivery_receipt",
        "message_id": message_id,
        "delivery_status": "delivered",
    }
    assert status_of(client, shop, message_id) == ("delivered", None)


def test_the_log_provider_reads_logged_never_delivered(client, shop, app):
    message_id = send(client, shop, ticket_id="1001", channel="sms", content="Hi", to=ANN_PHONE).get_json()[
        "message_id"
    ]
    delivery.attempt(message_id, {**app.config, "SMS_GATEWAY_URL": None})
    assert status_of(client, shop, message_id) == ("logged", None)
    health = client.get("/api/v1/health").get_json()
    assert health["messaging"] == {"sms": "log provider", "email": "log provider"}


ORDERS = list(itertools.permutations(["sent", "delivered"])) + list(
    itertools.permutations(["sent", "failed"])
)


@pytest.mark.parametrize("order", ORDERS, ids=[" then ".join(o) for o in ORDERS])
def test_receipts_in_any_order_end_in_the_furthest_state(client, shop, sent, order):
    message_id = sent()
    for status in order:
        assert (
            gateway_status(client, "gw-out-1", status, "30003" if status == "failed" else None).status_code
            == 200
        )
    expected = "delivered" if "delivered" in order else "failed"
    assert status_of(client, shop, message_id)[0] == expected
    assert failures() == (1 if expected == "failed" else 0)


def test_a_late_failure_after_delivered_and_a_repeat_change_nothing(client, shop, sent):
    message_id = sent()
    gateway_status(client, "gw-out-1", "delivered")
    gateway_status(client, "gw-out-1", "undelivered", "30005")
    gateway_status(client, "gw-out-1", "delivered")
    assert status_of(client, shop, message_id) == ("delivered", None) and failures() == 0


def test_a_failure_receipt_stays_failed(client, shop, app):
    """A failed message keeps its error; a later `sent` does not move it back."""
    message_id = send(client, shop, ticket_id="1001", channel="sms", content="Hi", to=ANN_PHONE).get_json()[
        "message_id"
    ]
    with HttpReceiver(default=(200, {"id": "gw-early"})) as gateway:
        delivery.attempt(message_id, {**app.config, "SMS_GATEWAY_URL": gateway.url})
    gateway_status(client, "gw-early", "failed", "30006")
    gateway_status(client, "gw-early", "sent")
    assert status_of(client, shop, message_id) == ("failed", "30006")


def test_an_undelivered_message_notifies_the_inbox(client, shop, sent):
    message_id = sent()
    gateway_status(client, "gw-out-1", "undelivered", "30005")
    assert status_of(client, shop, message_id) == ("undelivered", "30005")
    row = client.get("/api/v1/notifications", headers=shop).get_json()["data"][0]
    assert row["type"] == "message_failed"
    assert row["details"] == {
        "conversation_id": Message.get_by_id(message_id).conversation_id,
        "message_id": message_id,
        "delivery_status": "undelivered",
        "delivery_error": "30005",
    }


def test_the_gateways_opted_out_suppresses_the_number(client, shop, sent):
    sent()
    gateway_status(client, "gw-out-1", "failed", "opted_out")
    row = Suppression.get(Suppression.reason == "provider_opt_out")
    assert row.address == ANN_PHONE and Customer.get_by_id(1).sms_consent is False
    assert_error(
        send(client, shop, ticket_id="1001", channel="sms", content="x", to=ANN_PHONE), 422, "send_failed"
    )


def twilio_status(client, sid, status, error=None):
    params = {"MessageSid": sid, "MessageStatus": status, "AccountSid": "AC1"}
    if error:
        params["ErrorCode"] = error
    return post_twilio(client, "/inbound/sms/twilio/status", params)


def test_twilio_status_callbacks_and_21610(client, shop, sent):
    message_id = sent("SM-out-1")
    assert twilio_status(client, "SM-out-1", "sent").status_code == 200
    assert twilio_status(client, "SM-out-1", "queued").status_code == 200  # late: ignored
    assert status_of(client, shop, message_id)[0] == "sent"
    assert twilio_status(client, "SM-out-1", "undelivered", "21610").status_code == 200
    assert status_of(client, shop, message_id) == ("undelivered", "21610")
    assert Suppression.get(Suppression.reason == "provider_opt_out").address == ANN_PHONE


@pytest.mark.parametrize(
    "body,status,code,param",
    [
        ({"id": "nope", "status": "delivered"}, 404, "not_found", "id"),
        ({"id": "gw-out-1", "status": "lost"}, 400, "invalid_field", "status"),
        ({"id": "gw-out-1"}, 400, "invalid_field", "status"),
        ({"status": "delivered"}, 400, "missing_field", "id"),
        ({"id": "gw-out-1", "status": "failed", "error_code": 5}, 400, "invalid_field", "error_code"),
    ],
    ids=["unknown id", "unknown status", "no status", "no id", "error_code a number"],
)
def test_bad_gateway_receipts(client, shop, sent, body, status, code, param):
    message_id = sent()
    assert_error(post_gateway(client, "/inbound/sms/gateway/status", body), status, code, param)
    assert status_of(client, shop, message_id)[0] == "sent" and failures() == 0


def test_bad_twilio_receipts(client, shop, sent):
    sent("SM-out-1")
    assert_error(twilio_status(client, "SM-nope", "delivered"), 404, "not_found", "MessageSid")
    assert_error(twilio_status(client, "SM-out-1", "exploded"), 400, "invalid_field", "MessageStatus")
    params = {"MessageSid": "SM-out-1", "MessageStatus": "delivered"}
    assert_error(post_twilio(client, "/inbound/sms/twilio/status", params, signature="bad"), 403, "forbidden")

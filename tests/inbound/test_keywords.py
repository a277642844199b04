"""SMS keywords: STOP (after its reply), START, HELP, CONFIRM; each message still recorded."""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest

from shop import clock
from shop.models import Appointment, Customer, Event, Message, Suppression
from tasks import huey
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.messages import ANN_PHONE, send, shop_fixture
from tests.inbound.conftest import SHOP_NUMBER, gateway_sms, post_gateway, post_twilio, twilio_sms


def stopped() -> int:
    """Suppressions beyond the fixture's own two."""
    return Suppression.select().where(Suppression.reason != "fixture").count()


def text(client, body, id="gw-1"):
    return post_gateway(client, "/inbound/sms/gateway", gateway_sms(id=id, body=body)).get_json()


@pytest.mark.parametrize(
    "word",
    ["STOP", "stop", "  Stop\n", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "OPTOUT", "REVOKE"],
)
def test_stop_family_suppresses_after_the_reply_is_queued(client, shop, word):
    receipt = text(client, word)
    assert "no more texts" in receipt["reply"]
    inbound, reply = Message.select().order_by(Message.id)
    assert (inbound.direction, inbound.body) == ("inbound", word)  # the keyword is recorded too
    assert (reply.direction, reply.recipient, reply.sender, reply.delivery_status) == (
        "outbound",
        ANN_PHONE,
        SHOP_NUMBER,
        "queued",
    )
    assert huey.pending_count() == 1  # the reply's send job, committed with the suppression
    row = Suppression.get(Suppression.reason != "fixture")
    assert (row.channel, row.address, row.reason) == ("sms", ANN_PHONE, "stop_keyword")
    assert Customer.get_by_id(1).sms_consent is False


def test_stop_then_a_send_is_422_and_start_then_202(client, shop):
    text(client, "STOP", id="1")
    refused = send(client, shop, ticket_id="1001", channel="sms", content="Ready", to=ANN_PHONE)
    assert_error(refused, 422, "send_failed")
    receipt = text(client, "start", id="2")
    assert "on again" in receipt["reply"]
    assert stopped() == 0 and Customer.get_by_id(1).sms_consent is True
    assert (
        send(client, shop, ticket_id="1001", channel="sms", content="Ready", to=ANN_PHONE).status_code == 202
    )


def test_a_retried_stop_answers_once(client, shop):
    text(client, "STOP")
    again = text(client, "STOP")
    assert again["duplicate"] is True and again["reply"] is None
    assert Message.select().count() == 2 and stopped() == 1


def test_twilio_stop_answers_in_twiml_and_records_the_reply(client, shop):
    response = post_twilio(client, "/inbound/sms/twilio", twilio_sms(body="STOP"))
    assert response.status_code == 200
    assert (
        "<Message>Acme: you will get no more texts from us. Reply START to resume.</Message>"
        in response.get_data(as_text=True)
    )
    reply = Message.get(Message.direction == "outbound")
    assert reply.delivery_status == "sent" and huey.pending_count() == 0  # Twilio sends the TwiML
    assert stopped() == 1


def test_help_answers_the_shops_help_text(client, shop):
    assert text(client, "help")["reply"] == "Acme: call 555-0000."
    response = post_twilio(client, "/inbound/sms/twilio", twilio_sms(body=" INFO "))
    assert "<Message>Acme: call 555-0000.</Message>" in response.get_data(as_text=True)


def test_help_without_help_text_names_the_shop(client, load, app, monkeypatch):
    load(tenant_fixture("solo", sms_numbers=["+15555558000"]))
    monkeypatch.setitem(app.config, "SMS_GATEWAY_SECRET", "gateway-secret-for-tests")
    receipt = post_gateway(
        client, "/inbound/sms/gateway", gateway_sms(body="HELP", to="+15555558000")
    ).get_json()
    assert receipt["reply"].startswith("Solo: reply STOP")


def test_other_text_is_no_keyword(client, shop):
    assert text(client, "stop by tomorrow?")["reply"] is None
    assert stopped() == 0 and Message.select().count() == 1


def _local_day(days: int):
    return (
        clock.now().replace(tzinfo=ZoneInfo("UTC")).astimezone(ZoneInfo("America/New_York"))
        + timedelta(days=days)
    ).date()


@pytest.fixture
def booked(load, app, monkeypatch):
    """Ann has an appointment in two days and one in ten; Bo one tomorrow."""
    appointments = [
        {
            "id": 1,
            "customer_name": "Ann",
            "customer_phone": ANN_PHONE,
            "scheduled_date": _local_day(10).isoformat(),
            "scheduled_time": "10:00",
        },
        {
            "id": 2,
            "customer_name": "Ann",
            "customer_phone": ANN_PHONE,
            "scheduled_date": _local_day(2).isoformat(),
            "scheduled_time": "09:30",
        },
        {
            "id": 3,
            "customer_name": "Bo",
            "customer_phone": "+15555550101",
            "scheduled_date": _local_day(1).isoformat(),
            "scheduled_time": "11:00",
        },
    ]
    load(shop_fixture(sms_numbers=[SHOP_NUMBER], appointments=appointments))
    monkeypatch.setitem(app.config, "SMS_GATEWAY_SECRET", "gateway-secret-for-tests")
    return auth_headers("sk_test_acme_token_0001")


@pytest.mark.parametrize("word", ["CONFIRM", "c"])
def test_confirm_confirms_the_next_appointment_within_a_week(client, booked, word):
    receipt = text(client, word)
    assert "is confirmed" in receipt["reply"] and "09:30" in receipt["reply"]
    assert [a.status for a in Appointment.select().order_by(Appointment.id)] == [
        "scheduled",
        "confirmed",
        "scheduled",
    ]
    event = Event.get(Event.type == "appointment.updated")
    assert event.data["id"] == "2" and event.data["status"] == "confirmed"
    assert client.get("/api/v1/appointments/2", headers=booked).get_json()["status"] == "confirmed"


def test_confirm_without_an_appointment_says_so(client, booked):
    receipt = post_gateway(
        client, "/inbound/sms/gateway", gateway_sms(sender="+15555550104", body="CONFIRM")
    ).get_json()
    assert "no upcoming appointment" in receipt["reply"]
    assert Event.select().where(Event.type == "appointment.updated").count() == 0

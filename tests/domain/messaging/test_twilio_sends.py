"""SMS through Twilio's REST API (a fake on 127.0.0.1 over HTTPS): accepted, retried, refused, opted
out, and the signed status callback that follows; through the real delivery path."""

import logging

import pytest

from shop.domain.messaging import delivery
from shop.models import Customer, Event, Message, Notification, Suppression
from tests.helpers import assert_error, auth_headers
from tests.helpers.messages import ANN_PHONE, send, shop_fixture
from tests.helpers.receivers import HttpReceiver, free_port
from tests.helpers.twilio_api import AUTH_TOKEN, FakeTwilio, created, twilio_error
from tests.inbound.conftest import PUBLIC_URL, SHOP_NUMBER, post_twilio

STATUS_CALLBACK = PUBLIC_URL + "/inbound/sms/twilio/status"


@pytest.fixture
def shop(load, app, monkeypatch):
    """acme on SHOP_NUMBER, its Twilio status callback route on (the auth token signs it)."""
    load(shop_fixture(sms_numbers=[SHOP_NUMBER, "+15555550001"]))
    monkeypatch.setitem(app.config, "TWILIO_AUTH_TOKEN", AUTH_TOKEN)
    monkeypatch.setitem(app.config, "PUBLIC_URL", PUBLIC_URL)
    return auth_headers("sk_test_acme_token_0001")


@pytest.fixture
def twilio(tmp_path, monkeypatch):
    """A started fake Twilio whose CA the service's HTTP client trusts (requests' REQUESTS_CA_BUNDLE)."""
    with FakeTwilio(tmp_path) as fake:
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", fake.ca_path)
        yield fake


@pytest.fixture
def queued(client, shop):
    """`queued(text)`: an SMS to Ann sent through the API, still queued; its id."""

    def _queued(text="Your phone is ready") -> int:
        response = send(client, shop, ticket_id="1001", channel="sms", content=text, to=ANN_PHONE)
        assert response.status_code == 202
        return response.get_json()["message_id"]

    return _queued


def attempt(app, twilio, message_id, **settings):
    """One delivery job with Twilio as the SMS provider; retries wait 0 s (the job's own list)."""
    config = {**app.config, **twilio.settings(**settings), "SEND_RETRY_DELAYS": "0,0"}
    return delivery.attempt(message_id, config)


def status_of(client, shop, message_id):
    message = client.get(f"/api/v1/messages/{message_id}", headers=shop).get_json()
    return message["delivery_status"], message["delivery_error"]


def twilio_status(client, sid, status, error=None):
    """A status callback as Twilio posts it, signed with the auth token over PUBLIC_URL + path."""
    params = {"MessageSid": sid, "MessageStatus": status, "AccountSid": "AC1", "To": ANN_PHONE}
    if error:
        params["ErrorCode"] = error
    return post_twilio(client, "/inbound/sms/twilio/status", params)


def test_an_accepted_message_reads_sent_with_its_sid_then_delivered_by_the_callback(
    client, shop, twilio, queued, app
):
    twilio.script = [created("SM" + "a" * 32)]
    message_id = queued()
    assert attempt(app, twilio, message_id) == []
    assert twilio.forms == [
        {
            "To": ANN_PHONE,
            "From": SHOP_NUMBER,
            "Body": "Your phone is ready",
            "StatusCallback": STATUS_CALLBACK,
        },
    ]
    assert Message.get_by_id(message_id).external_uuid == "SM" + "a" * 32
    assert status_of(client, shop, message_id) == ("sent", None)
    response = twilio_status(client, "SM" + "a" * 32, "delivered")
    assert response.status_code == 200
    assert response.get_json() == {
        "object": "delivery_receipt",
        "message_id": message_id,
        "delivery_status": "delivered",
    }
    assert status_of(client, shop, message_id) == ("delivered", None)
    assert Event.select().where(Event.type == "message.sent").count() == 1


def test_without_a_public_url_twilio_is_asked_for_no_status_callback(
    client, shop, twilio, queued, app, monkeypatch
):
    monkeypatch.setitem(app.config, "PUBLIC_URL", None)
    attempt(app, twilio, queued())
    assert "StatusCallback" not in twilio.forms[0] and twilio.forms[0]["From"] == SHOP_NUMBER


BUSY = [
    twilio_error(500, 20500, "Internal Server Error"),
    twilio_error(503, 20503, "Service Unavailable"),
    twilio_error(429, 20429, "Too Many Requests"),
]


@pytest.mark.parametrize("busy", BUSY, ids=["a 500", "a 503", "a 429 (too many requests)"])
def test_a_busy_twilio_is_tried_again_and_the_message_delivered_once(client, shop, twilio, queued, app, busy):
    twilio.script = [busy, created("SM-second-try")]
    message_id = queued()
    assert attempt(app, twilio, message_id) == [(message_id, 0.0)]
    assert status_of(client, shop, message_id) == (
        "queued",
        f"Twilio answered {busy[0]}, error {busy[1]['code']} ({busy[1]['more_info']})",
    )
    assert attempt(app, twilio, message_id) == []
    message = Message.get_by_id(message_id)
    assert (message.delivery_status, message.external_uuid, message.delivery_attempts) == (
        "sent",
        "SM-second-try",
        2,
    )
    assert len(twilio.forms) == 2 and Event.select().where(Event.type == "message.sent").count() == 1


def test_an_unreachable_twilio_is_tried_again(client, shop, twilio, queued, app):
    message_id = queued()
    again = attempt(app, twilio, message_id, TWILIO_API_URL=f"https://127.0.0.1:{free_port()}")
    assert again == [(message_id, 0.0)]
    assert status_of(client, shop, message_id) == ("queued", "Twilio unreachable: ConnectionError")


def test_an_invalid_number_fails_for_good_with_twilios_code(client, shop, twilio, queued, app):
    twilio.script = [twilio_error(400, 21211, f"The 'To' number {ANN_PHONE} is not a valid phone number.")]
    message_id = queued()
    assert attempt(app, twilio, message_id) == []
    assert status_of(client, shop, message_id) == (
        "failed",
        "Twilio answered 400, error 21211 (https://www.twilio.com/docs/errors/21211)",
    )  # Twilio's own message is left out: it quotes the number
    assert len(twilio.forms) == 1 and not Suppression.select().where(Suppression.reason != "fixture").exists()
    note = Notification.get(Notification.type == "message_failed")
    assert note.details["message_id"] == message_id and note.details["delivery_status"] == "failed"


def test_a_recipient_who_opted_out_with_twilio_is_suppressed(client, shop, twilio, queued, app):
    twilio.script = [twilio_error(400, 21610, "Attempt to send to unsubscribed recipient")]
    message_id = queued()
    assert attempt(app, twilio, message_id) == []
    status, error = status_of(client, shop, message_id)
    assert status == "failed" and "error 21610" in error and "opted out" in error
    row = Suppression.get(Suppression.address == ANN_PHONE)
    assert row.reason == "provider_opt_out" and Customer.get_by_id(1).sms_consent is False
    refused = send(client, shop, ticket_id="1001", channel="sms", content="Hello?", to=ANN_PHONE)
    assert_error(refused, 422, "send_failed")
    assert len(twilio.forms) == 1


def test_wrong_credentials_fail_each_message_once_and_log_no_secret(
    client, shop, twilio, queued, app, caplog
):
    ids = [queued(f"Private text {i}") for i in range(3)]
    with caplog.at_level(logging.DEBUG, logger="shop"):  # the service's loggers (not peewee's SQL echo)
        assert attempt(app, twilio, ids[0], TWILIO_AUTH_TOKEN="not-the-token") == []
    assert twilio.requests == 3 and twilio.forms == []  # one try each, no retry scheduled
    for message_id in ids:
        status, error = status_of(client, shop, message_id)
        assert status == "failed" and error.startswith("Twilio answered 401, error 20003")
        assert "SHOP_TWILIO_AUTH_TOKEN" in error
    logged = caplog.text + "".join(str(getattr(r, "fields", "")) for r in caplog.records)
    assert "failed permanently" in logged
    assert "not-the-token" not in logged and "Private text" not in logged and ANN_PHONE not in logged


def test_without_a_from_number_nothing_reaches_twilio(client, load, app, twilio):
    load(shop_fixture())  # no sms_numbers and no SHOP_SMS_FROM
    headers = auth_headers("sk_test_acme_token_0001")
    response = send(client, headers, ticket_id="1001", channel="sms", content="Hi", to=ANN_PHONE)
    message_id = response.get_json()["message_id"]
    assert attempt(app, twilio, message_id) == []
    assert Message.get_by_id(message_id).delivery_status == "failed" and twilio.requests == 0


def test_an_explicit_provider_wins_over_the_gateway_url(client, shop, twilio, queued, app):
    with HttpReceiver(default=(200, {"id": "gw-1"})) as gateway:
        attempt(app, twilio, queued(), SMS_GATEWAY_URL=gateway.url)
        assert gateway.requests == [] and len(twilio.forms) == 1
        message_id = queued()
        attempt(app, twilio, message_id, SMS_GATEWAY_URL=gateway.url, SMS_PROVIDER="log")
        assert gateway.requests == [] and len(twilio.forms) == 1
    assert status_of(client, shop, message_id) == ("logged", None)


def test_health_names_twilio_as_the_sms_provider(client, app, twilio, monkeypatch):
    for name, value in twilio.settings().items():
        monkeypatch.setitem(app.config, name, value)
    assert client.get("/api/v1/health").get_json()["messaging"] == {"sms": "twilio", "email": "log provider"}

"""POST /api/v1/messages/send: every rule of the spec's send table and the synchronous pipeline."""

import json

import pytest

from shop import clock
from shop.models import Conversation, Event, Message
from tasks import huey
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.messages import ANN_PHONE, send, shop_fixture


@pytest.fixture
def shop(load):
    load(shop_fixture(), tenant_fixture("globex", tickets=[{"id": "2001"}]))
    return auth_headers("sk_test_acme_token_0001")


def nothing_recorded():
    return Message.select().count() == 0 and Event.select().count() == 0 and huey.pending_count() == 0


def test_sms_send_is_202_and_records_the_outbound_message(client, shop):
    response = send(client, shop, ticket_id="1001", channel="sms", content="Ready for pickup", to=ANN_PHONE)
    assert response.status_code == 202
    assert response.get_json() == {
        "object": "message_send_result",
        "ok": True,
        "ticket_id": "1001",
        "channel": "sms",
        "message_id": Message.get().id,
    }
    message = Message.get()
    assert (message.direction, message.channel, message.body, message.recipient) == (
        "outbound",
        "sms",
        "Ready for pickup",
        ANN_PHONE,
    )
    assert message.sent_from_ticket_id == "1001" and message.delivery_status == "queued"
    conversation = Conversation.get()
    assert conversation.customer_id == 1 and conversation.last_outbound_at == message.created_at
    assert conversation.updated_at == message.created_at
    assert huey.pending_count() == 1  # handed to the consumer only after the commit
    assert Event.select().count() == 0  # message.sent waits for the provider


def test_send_reuses_the_customers_conversation(client, shop):
    send(client, shop, ticket_id="1001", channel="sms", content="One", to=ANN_PHONE)
    send(client, shop, ticket_id="1001", channel="email", body="Two")
    assert Conversation.select().count() == 1 and Message.select().count() == 2


def test_email_to_defaults_to_the_customer_and_subject_to_the_ticket(client, shop):
    assert send(client, shop, ticket_id="1001", channel="email", body="Hello").status_code == 202
    message = Message.get()
    assert message.recipient == "Ann@Example.com"
    assert message.subject == "Ticket #1001: Cracked screen"


def test_email_to_must_match_case_insensitively(client, shop):
    assert (
        send(
            client, shop, ticket_id="1001", channel="email", body="Hi", to="ann@example.COM", subject="Custom"
        ).status_code
        == 202
    )
    assert Message.get().subject == "Custom"


def test_content_and_body_are_aliases(client, shop):
    assert send(client, shop, ticket_id="1001", channel="email", content="Via content").status_code == 202
    assert (
        send(client, shop, ticket_id="1001", channel="sms", body="Via body", to=ANN_PHONE).status_code == 202
    )
    assert (
        send(
            client, shop, ticket_id="1001", channel="sms", body=" Same ", content="Same", to=ANN_PHONE
        ).status_code
        == 202
    )
    assert [m.body for m in Message.select().order_by(Message.id)] == ["Via content", "Via body", "Same"]


def test_an_inbound_email_is_answered_in_reply_to_it(client, shop, runner):
    data = {
        "customer_id": 1,
        "channel": "email",
        "body": "Any news?",
        "sender": "ann@example.com",
        "message_id": "<abc@mail.example.com>",
    }
    result = runner.invoke(
        args=["shop", "activity", "message.received", "--tenant", "acme", "--data", json.dumps(data)]
    )
    assert result.exit_code == 0, result.output
    send(client, shop, ticket_id="1001", channel="email", body="Yes")
    reply = Message.select().where(Message.direction == "outbound").get()
    assert reply.in_reply_to == "<abc@mail.example.com>"


# (id, body, status, code, param)
BAD_SENDS = [
    (
        "missing ticket_id",
        {"channel": "sms", "content": "x", "to": ANN_PHONE},
        400,
        "missing_field",
        "ticket_id",
    ),
    ("missing channel", {"ticket_id": "1001", "content": "x"}, 400, "missing_field", "channel"),
    (
        "unknown channel",
        {"ticket_id": "1001", "channel": "fax", "content": "x"},
        400,
        "invalid_channel",
        "channel",
    ),
    (
        "channel as array",
        {"ticket_id": "1001", "channel": ["sms"], "content": "x"},
        400,
        "invalid_channel",
        "channel",
    ),
    (
        "ticket_id as number",
        {"ticket_id": 1001, "channel": "sms", "content": "x", "to": ANN_PHONE},
        400,
        "invalid_field",
        "ticket_id",
    ),
    (
        "ticket_id over 255",
        {"ticket_id": "1" * 256, "channel": "sms", "content": "x", "to": ANN_PHONE},
        400,
        "invalid_field",
        "ticket_id",
    ),
    (
        "sms without content",
        {"ticket_id": "1001", "channel": "sms", "to": ANN_PHONE},
        400,
        "missing_field",
        "content",
    ),
    (
        "sms with blank content",
        {"ticket_id": "1001", "channel": "sms", "content": "  ", "to": ANN_PHONE},
        400,
        "missing_field",
        "content",
    ),
    ("email without body", {"ticket_id": "1001", "channel": "email"}, 400, "missing_field", "body"),
    ("sms without to", {"ticket_id": "1001", "channel": "sms", "content": "x"}, 400, "missing_field", "to"),
    (
        "sms of 1,601 chars",
        {"ticket_id": "1001", "channel": "sms", "content": "x" * 1601, "to": ANN_PHONE},
        400,
        "invalid_field",
        "content",
    ),
    (
        "sms of 1,601 chars sent as body",
        {"ticket_id": "1001", "channel": "sms", "body": "x" * 1601, "to": ANN_PHONE},
        400,
        "invalid_field",
        "body",
    ),
    (
        "email of 100,001 chars sent as content",
        {"ticket_id": "1001", "channel": "email", "content": "x" * 100_001},
        400,
        "invalid_field",
        "content",
    ),
    (
        "email of 100,001 chars",
        {"ticket_id": "1001", "channel": "email", "body": "x" * 100_001},
        400,
        "invalid_field",
        "body",
    ),
    (
        "content and body differ",
        {"ticket_id": "1001", "channel": "sms", "content": "a", "body": "b", "to": ANN_PHONE},
        400,
        "conflicting_aliases",
        "content",
    ),
    (
        "email to another address",
        {"ticket_id": "1001", "channel": "email", "body": "x", "to": "eve@example.com"},
        400,
        "invalid_field",
        "to",
    ),
    (
        "subject on sms",
        {"ticket_id": "1001", "channel": "sms", "content": "x", "to": ANN_PHONE, "subject": "Hi"},
        400,
        "invalid_field",
        "subject",
    ),
    (
        "content as number",
        {"ticket_id": "1001", "channel": "sms", "content": 5, "to": ANN_PHONE},
        400,
        "invalid_field",
        "content",
    ),
    (
        "null to",
        {"ticket_id": "1001", "channel": "sms", "content": "x", "to": None},
        400,
        "invalid_field",
        "to",
    ),
    (
        "unknown field",
        {"ticket_id": "1001", "channel": "sms", "content": "x", "to": ANN_PHONE, "cc": "x"},
        400,
        "invalid_field",
        "cc",
    ),
    (
        "unknown ticket",
        {"ticket_id": "9999", "channel": "sms", "content": "x", "to": ANN_PHONE},
        404,
        "not_found",
        "ticket_id",
    ),
    (
        "hidden ticket",
        {"ticket_id": "1003", "channel": "sms", "content": "x", "to": ANN_PHONE},
        404,
        "not_found",
        "ticket_id",
    ),
    ("deleted ticket", {"ticket_id": "1007", "channel": "email", "body": "x"}, 404, "not_found", "ticket_id"),
    (
        "another tenant's ticket",
        {"ticket_id": "2001", "channel": "email", "body": "x"},
        404,
        "not_found",
        "ticket_id",
    ),
    (
        "non-numeric ticket",
        {"ticket_id": "abc", "channel": "email", "body": "x"},
        404,
        "not_found",
        "ticket_id",
    ),
    ("suppressed email", {"ticket_id": "1005", "channel": "email", "body": "x"}, 422, "send_failed", None),
    (
        "suppressed phone",
        {"ticket_id": "1001", "channel": "sms", "content": "x", "to": "+15555550199"},
        422,
        "send_failed",
        None,
    ),
    (
        "no sms consent",
        {"ticket_id": "1002", "channel": "sms", "content": "x", "to": "+15555550101"},
        422,
        "send_failed",
        None,
    ),
    (
        "invalid phone",
        {"ticket_id": "1001", "channel": "sms", "content": "x", "to": "call me"},
        422,
        "send_failed",
        None,
    ),
    (
        "customer without email",
        {"ticket_id": "1006", "channel": "email", "body": "x"},
        422,
        "send_failed",
        None,
    ),
    (
        "ticket without customer",
        {"ticket_id": "1004", "channel": "sms", "content": "x", "to": ANN_PHONE},
        422,
        "send_failed",
        None,
    ),
]


@pytest.mark.parametrize(
    "body, status, code, param", [case[1:] for case in BAD_SENDS], ids=[case[0] for case in BAD_SENDS]
)
def test_rejected_sends_record_nothing(client, shop, body, status, code, param):
    response = client.post("/api/v1/messages/send", json=body, headers=shop)
    assert_error(response, status, code, param=param)
    assert nothing_recorded()


def test_send_failed_says_which_check_refused(client, shop):
    cases = {"1005": "suppression", "1002": "consented"}
    for ticket_id, word in cases.items():
        body = (
            {"channel": "email", "body": "x"}
            if ticket_id == "1005"
            else {"channel": "sms", "content": "x", "to": "+15555550101"}
        )
        message = send(client, shop, ticket_id=ticket_id, **body).get_json()["error"]["message"]
        assert word in message


@pytest.mark.parametrize(
    "content_type, data",
    [("text/plain", "x"), ("application/json", "{bad")],
    ids=["wrong content type", "bad JSON"],
)
def test_malformed_requests(client, shop, content_type, data):
    response = client.post("/api/v1/messages/send", data=data, content_type=content_type, headers=shop)
    assert response.status_code in (400, 415)
    assert nothing_recorded()


def test_tenant_send_rate_gives_429_with_retry_after(client, load):
    load(shop_fixture(send_rate_per_minute=2))
    headers = auth_headers("sk_test_acme_token_0001")
    for _ in range(2):
        assert send(client, headers, ticket_id="1001", channel="email", body="x").status_code == 202
    response = send(client, headers, ticket_id="1001", channel="email", body="x")
    error = assert_error(response, 429, "rate_limited")
    assert error["type"] == "rate_limit_error"
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    assert Message.select().count() == 2
    clock.advance(61)
    assert send(client, headers, ticket_id="1001", channel="email", body="x").status_code == 202


def test_default_send_rate_is_30_a_minute(client, shop):
    statuses = [
        send(client, shop, ticket_id="1001", channel="email", body="x").status_code for _ in range(31)
    ]
    assert statuses == [202] * 30 + [429]


def test_a_retried_send_with_the_same_key_sends_once(client, shop):
    headers = {**shop, "Idempotency-Key": "send-ready-1001"}
    body = {"ticket_id": "1001", "channel": "sms", "content": "Ready", "to": ANN_PHONE}
    first = client.post("/api/v1/messages/send", json=body, headers=headers)
    second = client.post("/api/v1/messages/send", json=body, headers=headers)
    assert first.status_code == second.status_code == 202
    assert second.headers["Idempotent-Replayed"] == "true"
    assert Message.select().count() == 1 and huey.pending_count() == 1


def test_sending_needs_messages_write(client, load):
    load(
        shop_fixture(api_keys=[{"id": "k_ro", "token": "sk_test_readonly_0001", "scopes": ["messages.read"]}])
    )
    response = send(
        client, auth_headers("sk_test_readonly_0001"), ticket_id="1001", channel="email", body="x"
    )
    assert_error(response, 403, "insufficient_scope")
    assert nothing_recorded()


def test_a_send_refused_by_the_send_rate_runs_again_when_retried_with_its_key(client, load):
    # the spec: back off on 429, then resend the same request with the same idempotency key
    load(shop_fixture(send_rate_per_minute=1))
    headers = {**auth_headers("sk_test_acme_token_0001"), "Idempotency-Key": "send-after-backoff"}
    assert (
        send(
            client, auth_headers("sk_test_acme_token_0001"), ticket_id="1001", channel="email", body="x"
        ).status_code
        == 202
    )
    refused = send(client, headers, ticket_id="1001", channel="email", body="Ready")
    assert_error(refused, 429, "rate_limited")
    assert refused.headers["RateLimit-Reset"] == refused.headers["Retry-After"]
    clock.advance(int(refused.headers["Retry-After"]) + 1)
    retried = send(client, headers, ticket_id="1001", channel="email", body="Ready")
    assert retried.status_code == 202 and "Idempotent-Replayed" not in retried.headers
    assert [m.body for m in Message.select().order_by(Message.id)] == ["x", "Ready"]


def test_the_largest_email_fits_the_body_limit_however_it_is_escaped(client, shop):
    # 100,000 characters outside the BMP, in both aliases, every one \\uXXXX\\uXXXX-escaped: ~2.4 MB
    text = "\U0001f600" * 100_000
    raw = json.dumps(
        {
            "ticket_id": "1001",
            "channel": "email",
            "content": text,
            "body": text,
            "subject": "\U0001f600" * 998,
        }
    )
    assert len(raw) > 2_400_000
    response = client.post("/api/v1/messages/send", data=raw, content_type="application/json", headers=shop)
    assert response.status_code == 202
    assert Message.get(Message.direction == "outbound").body == text


# issue 23, item 3: an SMS goes only to a consenting customer's phone, never to any number
SMS_RECIPIENTS = [
    ("+15555550177", 422, "not the phone of one of this shop's customers", "a stranger's number"),
    ("+15555550188", 422, "not the phone of one of this shop's customers", "another tenant's customer"),
    ("+15555550101", 422, "has not consented", "a customer without SMS consent"),
    ("+15555550199", 422, "suppression list", "a suppressed number"),
    ("+15555550104", 202, None, "another customer of the shop who consented"),
    ("+1 555-555-0106", 202, None, "a consenting customer's phone stored with marks"),
    ("+1 (555) 555.0100", 202, None, "the ticket customer's phone typed with marks"),
]


@pytest.mark.parametrize(
    "to, status, reason", [c[:3] for c in SMS_RECIPIENTS], ids=[c[3] for c in SMS_RECIPIENTS]
)
def test_an_sms_goes_only_to_a_consenting_customers_phone(client, load, to, status, reason):
    extra = {"id": 6, "display_name": "Ed Marks", "phone": "+1 (555) 555 0106", "sms_consent": True}
    fixture = shop_fixture()
    fixture["customers"].append(extra)
    globex = tenant_fixture(
        "globex", customers=[{"id": 9, "display_name": "Gil", "phone": "+15555550188", "sms_consent": True}]
    )
    load(fixture, globex)
    headers = auth_headers("sk_test_acme_token_0001")
    response = send(client, headers, ticket_id="1001", channel="sms", content="Buy now", to=to)
    if status == 202:
        assert response.status_code == 202 and Message.get().recipient == to
        return
    error = assert_error(response, 422, "send_failed")
    assert reason in error["message"]
    assert nothing_recorded()

"""Email to an address beyond ASCII: sent with SMTPUTF8 where the server offers it, refused where not."""

from email import message_from_bytes
from email.policy import default

import pytest

from shop.domain.messaging import delivery
from shop.models import Message
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.receivers import SmtpSink

ADDRESS = "Jürgen@Exämple.de"


@pytest.fixture
def queued(client, load):
    load(
        tenant_fixture(
            "acme",
            customers=[{"id": 1, "display_name": "Jürgen", "email": ADDRESS}],
            tickets=[{"id": "1001", "customer_id": 1, "subject": "Akku getauscht ✓"}],
        )
    )
    response = client.post(
        "/api/v1/messages/send",
        headers=auth_headers("sk_test_acme_token_0001"),
        json={"ticket_id": "1001", "channel": "email", "body": "Grüße"},
    )
    assert response.status_code == 202
    return Message.get(Message.direction == "outbound")


def test_a_server_with_smtputf8_receives_it(queued):
    with SmtpSink(smtputf8=True) as sink:
        assert delivery.attempt(queued.id, {"SMTP_URL": sink.url, "SEND_RETRY_DELAYS": "1"}) == []
    [envelope] = sink.messages
    mime = message_from_bytes(envelope.content, policy=default)
    assert envelope.rcpt_tos == [ADDRESS] and "SMTPUTF8" in envelope.mail_options
    assert (mime["To"], mime["Subject"], mime.get_content().strip()) == (
        ADDRESS,
        "Ticket #1001: Akku getauscht ✓",
        "Grüße",
    )
    assert Message.get_by_id(queued.id).delivery_status == "sent"


def test_a_server_without_smtputf8_fails_it_for_good_and_says_why(queued):
    with SmtpSink() as sink:
        assert delivery.attempt(queued.id, {"SMTP_URL": sink.url, "SEND_RETRY_DELAYS": "1"}) == []
        assert sink.messages == []
    message = Message.get_by_id(queued.id)
    assert message.delivery_status == "failed" and "SMTPUTF8" in message.delivery_error


def test_a_display_name_beyond_ascii_needs_no_smtputf8(queued_ascii):
    with SmtpSink() as sink:  # no SMTPUTF8: the name is RFC 2047-encoded, the addresses are ASCII
        config = {"SMTP_URL": sink.url, "SEND_RETRY_DELAYS": "1"}
        assert delivery.attempt(queued_ascii.id, config) == []
    [envelope] = sink.messages
    assert envelope.mail_from == "shop@example.com" and envelope.rcpt_tos == ["ann@example.com"]
    assert message_from_bytes(envelope.content, policy=default)["From"] == "Café Zürich <shop@example.com>"


def test_a_long_in_reply_to_is_not_folded_into_an_encoded_word(queued):
    reference = "<SN6PR11MB3422B6F7D0C1E2A9B8F4C3D2A1B0C9D8E7F6@SN6PR11MB3422.namprd11.prod.outlook.com>"
    Message.update(in_reply_to=reference).where(Message.id == queued.id).execute()
    with SmtpSink(smtputf8=True) as sink:
        delivery.attempt(queued.id, {"SMTP_URL": sink.url, "SEND_RETRY_DELAYS": "1"})
    raw = sink.messages[0].content.decode()
    assert f"In-Reply-To: {reference}\r\n" in raw and f"References: {reference}\r\n" in raw


@pytest.fixture
def queued_ascii(client, load):
    load(
        tenant_fixture(
            "acme",
            customers=[{"id": 1, "display_name": "Ann", "email": "ann@example.com"}],
            tickets=[{"id": "1001", "customer_id": 1}],
        )
    )
    response = client.post(
        "/api/v1/messages/send",
        headers=auth_headers("sk_test_acme_token_0001"),
        json={"ticket_id": "1001", "channel": "email", "body": "Hi"},
    )
    assert response.status_code == 202
    Message.update(sender="Café Zürich <shop@example.com>").execute()  # as SHOP_SMTP_FROM may say
    return Message.get(Message.direction == "outbound")

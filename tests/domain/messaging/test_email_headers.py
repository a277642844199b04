"""SMTP header injection (issue 23, item 2): a subject never becomes a header of its own."""

from email import message_from_bytes
from email.policy import default

import pytest

from shop.domain.messaging import delivery
from shop.models import Event, Message, Ticket
from tasks import huey
from tests.helpers import assert_error, auth_headers
from tests.helpers.messages import send, shop_fixture
from tests.helpers.receivers import SmtpSink

INJECTIONS = [
    ("Ready\r\nReply-To : attacker@evil.test", "CR LF and a header"),
    ("Ready\nBcc: all@evil.test", "a bare LF"),
    ("Ready\rBcc: all@evil.test", "a bare CR"),
    ("Ready\x00", "a NUL"),
    ("Ready\tnow", "a tab"),
    ("Ready\x7f", "a DEL"),
    ("Ready\x85Bcc: x@evil.test", "a C1 next line"),
    ("Ready\u2028Bcc: x@evil.test", "a Unicode line separator"),
    ("\x0bReady", "a vertical tab first"),
]


@pytest.fixture
def shop(load):
    load(shop_fixture())
    return auth_headers("sk_test_acme_token_0001")


@pytest.mark.parametrize("subject", [c[0] for c in INJECTIONS], ids=[c[1] for c in INJECTIONS])
def test_a_given_subject_with_a_control_character_is_400_and_records_nothing(client, shop, subject):
    response = send(client, shop, ticket_id="1001", channel="email", body="Hi", subject=subject)
    error = assert_error(response, 400, "invalid_field", "subject")
    assert "control characters" in error["message"] or "NUL" in error["message"]
    assert Message.select().count() == 0 and Event.select().count() == 0 and huey.pending_count() == 0


def test_a_derived_subject_loses_its_control_characters_and_arrives_as_one_header(client, shop):
    Ticket.update(subject="Cracked\r\nReply-To : attacker@evil.test\x7f").where(Ticket.id == 1001).execute()
    assert send(client, shop, ticket_id="1001", channel="email", body="Hi").status_code == 202
    message = Message.get()
    assert message.subject == "Ticket #1001: Cracked Reply-To : attacker@evil.test"
    with SmtpSink() as sink:
        delivery.attempt(message.id, {"SMTP_URL": sink.url, "SEND_RETRY_DELAYS": "1"})
    [envelope] = sink.messages
    mime = message_from_bytes(envelope.content, policy=default)
    assert mime["Reply-To"] is None and mime["Subject"] == message.subject
    assert envelope.rcpt_tos == ["Ann@Example.com"]


def test_a_stored_subject_with_a_line_break_fails_for_good_and_reaches_no_server(client, shop):
    """A message recorded before the API refused line breaks: the header policy is the last guard."""
    assert send(client, shop, ticket_id="1001", channel="email", body="Hi").status_code == 202
    Message.update(subject="Hi\r\nBcc: all@evil.test").execute()
    with SmtpSink() as sink:
        delivery.attempt(Message.get().id, {"SMTP_URL": sink.url, "SEND_RETRY_DELAYS": ""})
    assert sink.messages == []
    message = Message.get()
    assert message.delivery_status == "failed" and "line break" in message.delivery_error

"""SMTP header injection (issue 23, item 2): a subject never becomes a header of its own."""

import random
import smtplib
import string
from email import message_from_bytes, policy
from email.policy import default

import pytest

from shop.domain.messaging import delivery, providers
from shop.domain.messaging.providers import WIRE_POLICY
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


def _folded(chosen, name: str, value: str):
    """What a policy writes for the header, or the error it refuses it with."""
    try:
        return chosen._fold(name, value, True)
    except Exception as error:  # noqa: BLE001 (the classic folding refuses some control characters)
        return type(error)


@pytest.mark.parametrize("seed", range(4))
def test_a_header_written_as_it_is_reads_as_the_classic_folding_makes_it(seed):
    """The wire policy writes a printable-ASCII header that fits its line without folding it: the
    same bytes as the classic folding, for any such value; anything else is folded as before."""
    chance = random.Random(seed)
    characters = [chr(c) for c in range(128) if chr(c) not in "\r\n"] + [" "] * 20 + list(",;=?<>@\t") * 3
    fast = 0
    for _ in range(5000):
        name = chance.choice(["Subject", "From", "To", "Message-ID", "Reply-To", "X-A"])
        pool = characters if chance.random() < 0.5 else string.printable[:95] + "\t  "
        value = "".join(chance.choice(pool) for _ in range(chance.randint(0, 90)))
        if value.isascii() and value.replace("\t", " ").isprintable() and len(name) + 2 + len(value) <= 78:
            fast += 1
        classic = policy.compat32.clone(linesep="\r\n")
        assert _folded(WIRE_POLICY, name, value) == _folded(classic, name, value), (name, value)
    assert fast > 1000  # the fast path was taken, and not only the classic one


def test_an_email_reaches_the_server_as_send_message_would_have_sent_it():
    """The message is flattened once with the wire policy, not through send_message: the server
    gets the same envelope and the same bytes as send_message sends for the same message (a long
    subject folded, a Reply-To, a line starting with From in the body)."""
    outgoing = providers.Outgoing(
        channel="email",
        recipient="Ann@Example.com",
        body="From the shop\nYour screen is ready.",
        subject="Ticket #1001: a long subject " + "word " * 20,
        sender="Bench Shop <shop@example.com>",
        reply_to="reply+abc@in.example.com",
    )
    mime = providers._mime(outgoing, "example.com")
    with SmtpSink() as sink, smtplib.SMTP("127.0.0.1", sink.port) as smtp:
        providers._hand_over(smtp, mime, "shop@example.com", "Ann@Example.com")
        smtp.send_message(mime)
    ours, theirs = sink.messages
    assert (
        (ours.mail_from, ours.rcpt_tos)
        == (theirs.mail_from, theirs.rcpt_tos)
        == ("shop@example.com", ["Ann@Example.com"])
    )
    assert ours.content == theirs.content and b"\r\n word" in ours.content

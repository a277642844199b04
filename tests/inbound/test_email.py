"""Inbound email: the raw POST and `shop mail-in` (a real SMTP client), threading, bounces, refusals."""

import smtplib
from email.message import EmailMessage
from urllib.parse import quote

import pytest

from shop.domain.messaging import delivery
from shop.domain.messaging.addresses import reply_address
from shop.inbound import mail_in
from shop.models import Conversation, Event, Message, Notification, Suppression
from tests.helpers import assert_error, auth_headers
from tests.helpers.messages import send, shop_fixture
from tests.helpers.receivers import SmtpSink, free_port

TOKEN = "inbound-email-token-for-tests"
INBOX = "hello@acme.test"
DOMAIN = "in.acme.test"


@pytest.fixture
def shop(load, app, monkeypatch):
    load(shop_fixture(inbound_email=INBOX))
    monkeypatch.setitem(app.config, "INBOUND_EMAIL_TOKEN", TOKEN)
    monkeypatch.setitem(app.config, "INBOUND_EMAIL_DOMAIN", DOMAIN)
    return auth_headers("sk_test_acme_token_0001")


def mail(
    body="Is my phone ready?",
    sender="Ann Lee <ann@example.com>",
    to=INBOX,
    message_id="<m1@example.com>",
    **headers,
):
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, to, "Re: your repair"
    if message_id:
        message["Message-ID"] = message_id
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(body)
    return message


def post(client, raw, token=TOKEN, recipient=None, content_type="message/rfc822"):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    path = "/inbound/email" + (f"?recipient={quote(recipient)}" if recipient else "")
    data = raw if isinstance(raw, bytes) else raw.as_bytes()
    return client.post(path, data=data, headers=headers, content_type=content_type)


def nothing_recorded():
    return (
        Message.select().count() == 0 and Event.select().count() == 0 and Notification.select().count() == 0
    )


def test_a_raw_post_lands_in_the_senders_conversation_once(client, shop):
    response = post(client, mail())
    assert response.status_code == 200, response.get_data(as_text=True)
    receipt = response.get_json()
    assert receipt == {
        "object": "inbound_receipt",
        "message_id": receipt["message_id"],
        "duplicate": False,
        "reply": None,
    }
    message = client.get(f"/api/v1/messages/{receipt['message_id']}", headers=shop).get_json()
    assert (message["channel"], message["body"], message["sender"], message["subject"]) == (
        "email",
        "Is my phone ready?",
        "ann@example.com",
        "Re: your repair",
    )
    assert Message.get().conversation.customer_id == 1
    assert Event.get(Event.type == "message.received").data["id"] == message["id"]
    assert Notification.get().details["channel"] == "email"
    again = post(client, mail()).get_json()
    assert again == {**receipt, "duplicate": True} and Message.select().count() == 1


def test_quoted_reply_trimmed_full_text_kept_attachments_as_metadata(client, shop):
    message = mail(body="Yes, go ahead.\n\nOn Mon, 2 Nov 2026, Acme wrote:\n> Shall we fix it?\n")
    message.add_attachment(b"\x89PNG....", maintype="image", subtype="png", filename="crack.png")
    assert post(client, message).status_code == 200
    stored = Message.get()
    assert stored.body == "Yes, go ahead." and "Shall we fix it?" in stored.full_body
    assert stored.attachments == [{"filename": "crack.png", "content_type": "image/png", "size": 8}]


def test_html_only_mail_becomes_text(client, shop):
    message = EmailMessage()
    message["From"], message["To"], message["Message-ID"] = "ann@example.com", INBOX, "<h@x>"
    message.set_content("<p>Hello<br>there &amp; bye</p>", subtype="html")
    assert post(client, message).status_code == 200
    assert Message.get().body == "Hello\nthere & bye"


def test_threading_by_reply_address_then_references_then_sender(client, shop, app):
    other = Conversation.create(tenant="acme", customer=None)
    post(
        client, mail(to=reply_address(app.config, other.id), message_id="<r1@x>", sender="someone@else.test")
    )
    assert Message.get(Message.message_id_header == "<r1@x>").conversation_id == other.id
    Message.create(
        tenant="acme",
        conversation=other,
        channel="email",
        direction="outbound",
        body="Hi",
        message_id_header="<ours-1@acme>",
        read=True,
    )
    post(
        client,
        mail(
            message_id="<r2@x>",
            sender="third@else.test",
            In_Reply_To="<ours-1@acme>",
            References="<a@b> <ours-1@acme>",
        ),
    )
    assert Message.get(Message.message_id_header == "<r2@x>").conversation_id == other.id
    post(client, mail(message_id="<r3@x>", sender="new@else.test"))
    new = Message.get(Message.message_id_header == "<r3@x>").conversation
    assert new.customer_id is None and new.id != other.id and new.customer_email == "new@else.test"


def test_a_forged_reply_token_is_an_unknown_recipient(client, shop, app):
    forged = reply_address(app.config, 5).replace("c5-", "c6-")
    assert_error(post(client, mail(to=forged)), 404, "not_found", "recipient")


def test_outbound_mail_carries_reply_to_and_a_verp_sender_and_its_bounce_fails_it(client, shop, app):
    message_id = send(client, shop, ticket_id="1001", channel="email", body="Ready").get_json()["message_id"]
    with SmtpSink() as sink:
        delivery.attempt(message_id, {**app.config, "SMTP_URL": sink.url})
    envelope = sink.messages[0]
    assert envelope.mail_from.startswith("bounces+m") and envelope.mail_from.endswith("@" + DOMAIN)
    assert b"Reply-To: reply+c" in envelope.original_content
    ours = Message.get_by_id(message_id)
    assert ours.message_id_header and ours.delivery_status == "sent"
    response = post(client, dsn(ours.message_id_header, "5.1.1"), recipient=envelope.mail_from)
    assert response.get_json() == {
        "object": "inbound_receipt",
        "message_id": None,
        "duplicate": False,
        "reply": None,
        "bounce": True,
    }
    ours = Message.get_by_id(message_id)
    assert (ours.delivery_status, ours.delivery_error) == ("failed", "bounce 5.1.1")
    assert Suppression.get(Suppression.reason == "bounce").address == "ann@example.com"
    assert Message.select().where(Message.direction == "inbound").count() == 0  # not a customer message
    assert Notification.get().type == "message_failed"


def dsn(original_id: str, status: str) -> bytes:
    return (
        "From: MAILER-DAEMON@mx.example\r\nTo: "
        + INBOX
        + "\r\nSubject: Undelivered\r\nMessage-ID: <dsn1@mx>\r\n"
        "MIME-Version: 1.0\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=B\r\n\r\n"
        "--B\r\nContent-Type: text/plain\r\n\r\nIt bounced.\r\n"
        "--B\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example\r\n\r\n"
        f"Final-Recipient: rfc822; ann@example.com\r\nAction: failed\r\nStatus: {status}\r\n"
        "--B\r\nContent-Type: text/rfc822-headers\r\n\r\n"
        f"Message-ID: {original_id}\r\nTo: ann@example.com\r\n--B--\r\n"
    ).encode()


def test_a_soft_bounce_to_the_inbox_fails_without_suppressing(client, shop):
    ours = Message.create(
        tenant="acme",
        conversation=Conversation.create(tenant="acme"),
        channel="email",
        direction="outbound",
        recipient="ann@example.com",
        message_id_header="<o2@acme>",
        delivery_status="sent",
        read=True,
    )
    assert post(client, dsn("<o2@acme>", "4.2.2")).get_json()["bounce"] is True
    assert Message.get_by_id(ours.id).delivery_status == "failed"
    assert Suppression.select().where(Suppression.reason == "bounce").count() == 0


@pytest.mark.parametrize("value", ["auto-replied", "auto-generated"])
def test_automatic_mail_is_refused(client, shop, value):
    assert_error(post(client, mail(Auto_Submitted=value)), 422, "unprocessable")
    assert nothing_recorded()


def test_our_own_message_coming_back_is_a_loop(client, shop):
    Message.create(
        tenant="acme",
        conversation=Conversation.create(tenant="acme"),
        channel="email",
        direction="outbound",
        message_id_header="<ours@acme>",
        read=True,
    )
    assert_error(post(client, mail(message_id="<ours@acme>")), 422, "unprocessable")


def bomb() -> bytes:
    head = "From: a@b.c\r\nTo: " + INBOX + "\r\nMIME-Version: 1.0\r\n"
    body = "x\r\n"
    for depth in range(30):
        head_of = f"Content-Type: multipart/mixed; boundary=b{depth}\r\n\r\n"
        body = f"{head_of}--b{depth}\r\n{body}\r\n--b{depth}--\r\n"
    return (head + body).encode()


BAD = [
    (
        "not UTF-8 where it says so",
        b"From: a@b.c\r\nTo: "
        + INBOX.encode()
        + b"\r\nContent-Type: text/plain; charset=utf-8\r\n\r\ncaf\xe9\r\n",
        400,
        "invalid_email",
        None,
    ),
    (
        "an unknown charset",
        b"From: a@b.c\r\nTo: "
        + INBOX.encode()
        + b"\r\nContent-Type: text/plain; charset=x-nope\r\n\r\nhi\r\n",
        400,
        "invalid_email",
        None,
    ),
    (
        "a multipart without its boundary",
        b"From: a@b.c\r\nTo: " + INBOX.encode() + b"\r\nContent-Type: multipart/mixed\r\n\r\nhi\r\n",
        400,
        "invalid_email",
        None,
    ),
    ("a MIME bomb", bomb(), 400, "invalid_email", None),
    ("no headers at all", b"\r\n\r\njust text", 400, "invalid_email", None),
    (
        "no From",
        b"To: " + INBOX.encode() + b"\r\nMessage-ID: <x@y>\r\n\r\nhi\r\n",
        400,
        "invalid_email",
        "from",
    ),
    ("an unknown recipient", mail(to="nobody@acme.test").as_bytes(), 404, "not_found", "recipient"),
]


@pytest.mark.parametrize("raw,status,code,param", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_mail_is_refused_cleanly(client, shop, raw, status, code, param):
    assert_error(post(client, raw), status, code, param)
    assert nothing_recorded()


def test_the_token_type_and_size_are_checked(client, shop, app, monkeypatch):
    assert_error(post(client, mail(), token=None), 401, "unauthorized")
    assert_error(post(client, mail(), token="wrong"), 403, "forbidden")
    assert_error(post(client, mail(), content_type="text/plain"), 415, "unsupported_media_type")
    monkeypatch.setitem(app.config, "INBOUND_MAX_BYTES", 1000)
    assert_error(post(client, mail(body="x" * 2000)), 413, "payload_too_large")
    monkeypatch.setitem(app.config, "INBOUND_EMAIL_TOKEN", None)
    assert_error(post(client, mail()), 404, "not_found")
    assert nothing_recorded()


@pytest.fixture
def listener(app, shop, monkeypatch):
    monkeypatch.setitem(app.config, "INBOUND_MAX_BYTES", 20_000)
    controller = mail_in.start(app, "127.0.0.1", free_port())
    yield controller
    controller.stop()


def test_mail_in_takes_mail_over_smtp_and_refuses_unknown_recipients_at_rcpt(listener, client):
    with smtplib.SMTP("127.0.0.1", listener.port, timeout=10) as smtp:
        smtp.send_message(mail())
        smtp.send_message(mail())  # the client's retry
        with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
            smtp.send_message(mail(to="nobody@acme.test", message_id="<m2@x>"))
        assert refused.value.recipients["nobody@acme.test"][0] == 550
        with pytest.raises(smtplib.SMTPSenderRefused) as too_big:  # SIZE announced: refused at MAIL FROM
            smtp.send_message(mail(body="x" * 30_000, message_id="<m3@x>"))
        assert too_big.value.smtp_code == 552
        with pytest.raises(smtplib.SMTPDataError) as loop:
            smtp.send_message(mail(message_id="<m4@x>", Auto_Submitted="auto-replied"))
        assert loop.value.smtp_code == 550
    assert Message.select().count() == 1 and Message.get().body == "Is my phone ready?"


def test_mail_in_speaks_lmtp(app, shop):
    controller = mail_in.start(app, "127.0.0.1", free_port(), lmtp=True)
    try:
        with smtplib.LMTP("127.0.0.1", controller.port, timeout=10) as lmtp:
            lmtp.send_message(mail())
    finally:
        controller.stop()
    assert Message.select().count() == 1

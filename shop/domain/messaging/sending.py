"""POST /messages/send, synchronous part: validate, screen, rate-limit, record, then hand off."""

import math
import re
from datetime import timedelta
from typing import NamedTuple

from peewee import fn

from schemas.messages import SUBJECT_CHARACTERS
from shop import clock, queue
from shop.db import named_sql, run_sql, serialize, write_transaction
from shop.domain.messaging.conversations import conversation_for_customer
from shop.domain.records.tickets import ticket_number
from shop.models import Customer, Message, Tenant, TenantSmsNumber, Ticket
from shop.platform.errors import ApiError, not_found

LIMITS = {"sms": 1_600, "email": 100_000}
TEXT_FIELD = {"sms": "content", "email": "body"}  # the field each channel names; the other is its alias
DEFAULT_SEND_RATE_PER_MINUTE = 30
PHONE = re.compile(r"^\+[1-9][0-9]{7,14}$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
# C0 and C1 controls, DEL and the Unicode line and paragraph separators: in a header each is a line
# break or worse (a CR/LF would start a header of its own: SMTP header injection)
CONTROL_CHARACTERS = re.compile(SUBJECT_CHARACTERS.replace("[^", "[", 1))


def normalise_address(channel: str, address: str) -> str:
    """The form addresses are compared in: lower-case email, or a phone without spaces or dashes."""
    if channel == "email":
        return address.strip().lower()
    return re.sub(r"[\s().-]", "", address.strip())


def message_text(channel: str, body: dict) -> str:
    """The text from `content`/`body` (aliases), checked for conflict, presence and length."""
    content, text = body.get("content"), body.get("body")
    if content is not None and text is not None and content.strip() != text.strip():
        raise ApiError(
            400, "conflicting_aliases", "content and body differ; send one of them.", param="content"
        )
    value = content if content is not None else text
    field = TEXT_FIELD[channel]
    if value is None or not value.strip():
        raise ApiError(400, "missing_field", f"{field} is required for {channel} messages.", param=field)
    if len(value) > LIMITS[channel]:
        sent_as = "content" if content is not None else "body"  # param names the field as sent
        raise ApiError(
            400, "invalid_field", f"{sent_as} is longer than {LIMITS[channel]} characters.", param=sent_as
        )
    return value


def _recipient(channel: str, body: dict, customer: Customer | None) -> str:
    """Who receives it: the SMS `to`, or the ticket customer's email (which `to` must repeat)."""
    if channel == "sms":
        if not body.get("to"):
            raise ApiError(400, "missing_field", "to is required for sms messages.", param="to")
        if len(body["to"]) > 50:
            raise ApiError(400, "invalid_field", "to is longer than 50 characters.", param="to")
        return body["to"]
    email = customer.email if customer is not None else None
    if body.get("to") is not None and (email is None or body["to"].strip().lower() != email.strip().lower()):
        raise ApiError(400, "invalid_field", "to must be the ticket customer's email address.", param="to")
    if not email:
        raise ApiError(422, "send_failed", "The ticket's customer has no email address.")
    return email


# a send runs these on every request: as constant SQL the driver prepares each once (the query
# builder cost more than the statements; docs/performance.md, Messaging)
TICKET_SQL = named_sql(
    f"SELECT {Ticket.columns('t')}, {Customer.columns('c')} FROM ticket AS t "
    "LEFT JOIN customer AS c ON c.id = t.customer_id AND c.tenant_id = t.tenant_id "
    "WHERE t.tenant_id = :tenant AND t.id = :id AND t.hidden = :no AND t.deleted = :no"
)
SUPPRESSED_SQL = named_sql(
    "SELECT 1 FROM suppression WHERE tenant_id = :tenant AND channel = :channel AND address = :address"
)
RECENT_SENDS_SQL = named_sql(
    "SELECT COUNT(*) FROM message WHERE tenant_id = :tenant AND direction = 'outbound' "
    "AND automated = :no AND created_at > :since"
)
CONVERSATION_SQL = named_sql(
    "SELECT id FROM conversation WHERE tenant_id = :tenant AND customer_id = :customer ORDER BY id LIMIT 1"
)
LAST_INBOUND_EMAIL_SQL = named_sql(
    "SELECT message_id_header FROM message WHERE conversation_id = :conversation AND channel = 'email' "
    "AND direction = 'inbound' AND message_id_header IS NOT NULL ORDER BY created_at DESC, id DESC LIMIT 1"
)
INSERT_SQL = named_sql(
    "INSERT INTO message (tenant_id, conversation_id, channel, direction, body, subject, sender, recipient, "
    "sent_from_ticket_id, in_reply_to, read, created_at, delivery_status, delivery_attempts, "
    "next_attempt_at) VALUES (:tenant, :conversation, :channel, 'outbound', :body, :subject, :sender, "
    ":recipient, :ticket, :reply_to, :yes, :now, 'queued', 0, :now) RETURNING id"
)
TOUCH_CONVERSATION_SQL = named_sql(
    "UPDATE conversation SET last_outbound_at = :now, updated_at = :now, customer_email = :email, "
    "customer_name = :name WHERE id = :id"
)


def _ticket_and_customer(tenant_id: str, ticket_id: str) -> tuple[Ticket | None, Customer | None]:
    """The visible ticket and its customer (if it has one in this tenant)."""
    number = ticket_number(ticket_id)
    rows = run_sql(TICKET_SQL, {"tenant": tenant_id, "id": number, "no": False}) if number else []
    if not rows:
        return None, None
    split = len(Ticket._meta.sorted_fields)
    ticket, customer_row = Ticket.from_row(rows[0][:split]), rows[0][split:]
    return ticket, (Customer.from_row(customer_row) if customer_row[0] is not None else None)


def _screen(tenant_id: str, channel: str, address: str, customer: Customer | None) -> str:
    """Contact validity, suppression and SMS consent; the address in its compared form."""
    normal = normalise_address(channel, address)
    valid = PHONE.match(normal) if channel == "sms" else EMAIL.match(normal)
    if not valid:
        raise ApiError(422, "send_failed", f"Invalid contact: {channel} address is not deliverable.")
    if run_sql(SUPPRESSED_SQL, {"tenant": tenant_id, "channel": channel, "address": normal}):
        raise ApiError(422, "send_failed", f"The recipient is on the {channel} suppression list.")
    if channel == "sms":
        _check_sms_consent(tenant_id, normal, customer)
    return normal


def _check_sms_consent(tenant_id: str, normal: str, ticket_customer: Customer | None) -> None:
    """An SMS goes only to a phone of one of the tenant's customers who consented to SMS (the
    ticket's customer or another): else a consenting customer's ticket could text anyone."""
    if (
        ticket_customer is not None
        and ticket_customer.sms_consent
        and normalise_address("sms", ticket_customer.phone or "") == normal
    ):
        return  # the common case, without a query
    consents = [row.sms_consent for row in customers_with_phone(tenant_id, normal)]
    if not consents:
        raise ApiError(
            422, "send_failed", "Unknown recipient: to is not the phone of one of this shop's customers."
        )
    if not any(consents):
        raise ApiError(422, "send_failed", "The customer has not consented to SMS.")


def customers_with_phone(tenant_id: str, normal: str):
    """The tenant's customers whose phone, in its compared form, is `normal` (a phone is stored as
    typed: spaces, dashes, dots and brackets are dropped in SQL as normalise_address drops them)."""
    compared = Customer.phone
    for mark in (" ", "-", ".", "(", ")"):
        compared = fn.REPLACE(compared, mark, "")
    return Customer.for_tenant(tenant_id).where(compared == normal)


def _check_send_rate(tenant: Tenant) -> None:
    """429 when the tenant has sent its per-minute allowance in the last 60 seconds (automated
    messages, reminders and customer messages, neither count nor are counted; inside the
    send's write transaction: SQLite's one writer, or on PostgreSQL a lock on the tenant's sends)."""
    serialize("send-rate", tenant.id)
    allowance = tenant.send_rate_per_minute or DEFAULT_SEND_RATE_PER_MINUTE
    now = clock.now()
    since = now - timedelta(seconds=60)
    if run_sql(RECENT_SENDS_SQL, {"tenant": tenant.id, "since": since, "no": False})[0][0] < allowance:
        return
    # the allowance-th newest send leaves the window first among those that fill it
    recent = Message.for_tenant(tenant.id).where(
        (Message.direction == "outbound") & ~Message.automated & (Message.created_at > since)
    )
    oldest = recent.order_by(Message.created_at.desc()).offset(allowance - 1).first()
    wait = max(1, math.ceil((oldest.created_at + timedelta(seconds=60) - now).total_seconds()))
    raise ApiError(
        429,
        "rate_limited",
        f"This shop may send {allowance} messages a minute.",
        headers={"Retry-After": str(wait)},
    )


def check_subject(subject: str | None) -> None:
    """400 invalid_field on `subject` if a given subject holds a line break or control character."""
    if subject is not None and CONTROL_CHARACTERS.search(subject):
        raise ApiError(
            400,
            "invalid_field",
            "subject may not contain line breaks or other control characters.",
            param="subject",
        )


def _subject(body: dict, ticket: Ticket) -> str:
    """The given subject (checked), else one derived from the ticket with control characters
    replaced by spaces (a ticket's subject comes from many faces; a header must stay one line)."""
    if body.get("subject"):
        return body["subject"]
    derived = f"Ticket #{ticket.id}: {ticket.subject}" if ticket.subject else f"Ticket #{ticket.id}"
    return " ".join(CONTROL_CHARACTERS.sub(" ", derived).split())


def sender_for(channel: str, config, tenant_id: str | None = None) -> str | None:
    """The From of a channel's messages: the configured email sender; for SMS the tenant's first
    number (its `sms_numbers`), else the configured one."""
    if channel == "email":
        return config["SMTP_FROM"]
    first = (
        TenantSmsNumber.for_tenant(tenant_id)
        .select(TenantSmsNumber.number)
        .order_by(TenantSmsNumber.position)
        .first()
    )
    return first.number if first is not None else config["SMS_FROM"]


def send(tenant: Tenant, body: dict, sender: str | None) -> dict:
    """POST /messages/send: the pipeline, answered as the send result (the message goes out later)."""
    sent = send_message(tenant, body, sender)
    return {
        "object": "message_send_result",
        "ok": True,
        "ticket_id": sent.ticket_id,
        "channel": body["channel"],
        "message_id": sent.message_id,
    }


class Sent(NamedTuple):
    """What a send recorded: the ticket it was sent on (canonical id) and the queued message."""

    ticket_id: str
    message_id: int


def send_message(tenant: Tenant, body: dict, sender: str | None) -> Sent:
    """Run the synchronous pipeline and record the outbound message and its delivery job."""
    channel = body["channel"]
    if channel == "sms" and body.get("subject") is not None:
        raise ApiError(400, "invalid_field", "subject applies to email messages only.", param="subject")
    check_subject(body.get("subject"))
    text = message_text(channel, body)
    with write_transaction():
        ticket, customer = _ticket_and_customer(tenant.id, body["ticket_id"])
        if ticket is None:
            raise not_found("ticket", body["ticket_id"], "ticket_id")
        recipient = _recipient(channel, body, customer)
        _screen(tenant.id, channel, recipient, customer)
        if customer is None:
            raise ApiError(422, "send_failed", "The ticket has no customer to converse with.")
        _check_send_rate(tenant)
        message_id = _record(
            tenant.id,
            ticket,
            customer,
            channel,
            text,
            recipient,
            sender,
            _subject(body, ticket) if channel == "email" else None,
        )
        queue.enqueue(queue.SEND_MESSAGE, message_id)  # commits with the message (shop.queue_storage)
    return Sent(str(ticket.id), message_id)


def _record(tenant_id, ticket, customer, channel, text, recipient, sender, subject) -> int:
    """The outbound message in the customer's conversation, which it moves to the top; its id."""
    rows = run_sql(CONVERSATION_SQL, {"tenant": tenant_id, "customer": customer.id})
    conversation_id = rows[0][0] if rows else conversation_for_customer(tenant_id, customer).id
    now = clock.now()
    reply_to = None
    if channel == "email":
        last = run_sql(LAST_INBOUND_EMAIL_SQL, {"conversation": conversation_id})
        reply_to = last[0][0] if last else None
    message_id = run_sql(
        INSERT_SQL,
        {
            "tenant": tenant_id,
            "conversation": conversation_id,
            "channel": channel,
            "body": text,
            "subject": subject,
            "sender": sender,
            "recipient": recipient,
            "ticket": str(ticket.id),
            "reply_to": reply_to,
            "yes": True,
            "now": now,
        },
    )[0][0]
    run_sql(
        TOUCH_CONVERSATION_SQL,
        {"id": conversation_id, "now": now, "email": customer.email, "name": customer.display_name},
    )
    return message_id

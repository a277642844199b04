"""POST /messages/send, synchronous part: validate, screen, rate-limit, record, then hand off."""

import math
import re
from datetime import timedelta

from shop import clock
from shop.db import db, write_transaction
from shop.domain.conversations import conversation_for_customer
from shop.domain.tickets import find_visible_ticket
from shop.models import Customer, Message, Suppression, Tenant, Ticket
from shop.platform.errors import ApiError

LIMITS = {"sms": 1_600, "email": 100_000}
TEXT_FIELD = {"sms": "content", "email": "body"}  # the field each channel names; the other is its alias
DEFAULT_SEND_RATE_PER_MINUTE = 30
PHONE = re.compile(r"^\+[1-9][0-9]{7,14}$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def normalise_address(channel: str, address: str) -> str:
    """The form addresses are compared in: lower-case email, or a phone without spaces or dashes."""
    if channel == "email":
        return address.strip().lower()
    return re.sub(r"[\s().-]", "", address.strip())


def message_text(channel: str, body: dict) -> str:
    """The text from `content`/`body` (aliases), checked for conflict, presence and length."""
    content, text = body.get("content"), body.get("body")
    if content is not None and text is not None and content.strip() != text.strip():
        raise ApiError(400, "conflicting_aliases", "content and body differ; send one of them.",
                       param="content")
    value = content if content is not None else text
    field = TEXT_FIELD[channel]
    if value is None or not value.strip():
        raise ApiError(400, "missing_field", f"{field} is required for {channel} messages.", param=field)
    if len(value) > LIMITS[channel]:
        raise ApiError(400, "invalid_field", f"{field} is longer than {LIMITS[channel]} characters.",
                       param=field)
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


def _screen(tenant_id: str, channel: str, address: str, customer: Customer | None) -> str:
    """Contact validity, suppression and SMS consent; the address in its compared form."""
    normal = normalise_address(channel, address)
    valid = PHONE.match(normal) if channel == "sms" else EMAIL.match(normal)
    if not valid:
        raise ApiError(422, "send_failed", f"Invalid contact: {channel} address is not deliverable.")
    suppressed = Suppression.for_tenant(tenant_id).where(
        (Suppression.channel == channel) & (Suppression.address == normal)).exists()
    if suppressed:
        raise ApiError(422, "send_failed", f"The recipient is on the {channel} suppression list.")
    if channel == "sms" and (customer is None or not customer.sms_consent):
        raise ApiError(422, "send_failed", "The customer has not consented to SMS.")
    return normal


def _check_send_rate(tenant: Tenant) -> None:
    """429 when the tenant has sent its per-minute allowance in the last 60 seconds."""
    allowance = tenant.send_rate_per_minute or DEFAULT_SEND_RATE_PER_MINUTE
    now = clock.now()
    recent = (Message.for_tenant(tenant.id)
              .where((Message.direction == "outbound") & (Message.created_at > now - timedelta(seconds=60))
                     & Message.delivery_status.is_null(False)))
    if recent.count() < allowance:
        return
    # the allowance-th newest send leaves the window first among those that fill it
    oldest = recent.order_by(Message.created_at.desc()).offset(allowance - 1).first()
    wait = max(1, math.ceil((oldest.created_at + timedelta(seconds=60) - now).total_seconds()))
    raise ApiError(429, "rate_limited", f"This shop may send {allowance} messages a minute.",
                   headers={"Retry-After": str(wait)})


def _subject(body: dict, ticket: Ticket) -> str:
    if body.get("subject"):
        return body["subject"]
    return f"Ticket #{ticket.id}: {ticket.subject}" if ticket.subject else f"Ticket #{ticket.id}"


def send(tenant: Tenant, body: dict, sender: str | None, enqueue) -> dict:
    """Run the synchronous pipeline and record the outbound message; `enqueue(id)` runs after commit."""
    channel = body["channel"]
    if channel == "sms" and body.get("subject") is not None:
        raise ApiError(400, "invalid_field", "subject applies to email messages only.", param="subject")
    text = message_text(channel, body)
    with write_transaction():
        ticket = find_visible_ticket(tenant.id, body["ticket_id"])
        if ticket is None:
            raise ApiError(404, "not_found", f"No ticket {body['ticket_id']}.", param="ticket_id")
        customer = Customer.get_or_none(Customer.id == ticket.customer_id) if ticket.customer_id else None
        recipient = _recipient(channel, body, customer)
        _screen(tenant.id, channel, recipient, customer)
        if customer is None:
            raise ApiError(422, "send_failed", "The ticket has no customer to converse with.")
        _check_send_rate(tenant)
        message = _record(tenant.id, ticket, customer, channel, text, recipient, sender,
                          _subject(body, ticket) if channel == "email" else None)
        db.after_commit(lambda: enqueue(message.id))
    return {"object": "message_send_result", "ok": True, "ticket_id": str(ticket.id), "channel": channel}


def _record(tenant_id, ticket, customer, channel, text, recipient, sender, subject) -> Message:
    """The outbound message in the customer's conversation, which it moves to the top."""
    conversation = conversation_for_customer(tenant_id, customer)
    now = clock.now()
    reply_to = _last_inbound_email_id(conversation) if channel == "email" else None
    message = Message.create(tenant=tenant_id, conversation=conversation, channel=channel,
                             direction="outbound", body=text, subject=subject, sender=sender,
                             recipient=recipient, sent_from_ticket_id=str(ticket.id),
                             in_reply_to=reply_to, read=True, created_at=now, delivery_status="queued",
                             next_attempt_at=now)
    conversation.last_outbound_at = conversation.updated_at = now
    conversation.customer_email, conversation.customer_name = customer.email, customer.display_name
    conversation.save()
    return message


def _last_inbound_email_id(conversation) -> str | None:
    """The Message-ID of the customer's latest inbound email, which this one answers."""
    last = (Message.select(Message.message_id_header)
            .where((Message.conversation == conversation.id) & (Message.channel == "email")
                   & (Message.direction == "inbound") & Message.message_id_header.is_null(False))
            .order_by(Message.created_at.desc(), Message.id.desc()).first())
    return last.message_id_header if last else None

"""Inbound messages: what every provider adapter hands in (one InboundMessage), and its rules.

The adapters (shop/inbound/twilio.py, gateway.py, email.py) verify and parse their format; this
module finds the tenant, the customer and the conversation, records the message once (a provider
retry is a duplicate), emits `message.received`, adds the inbox notification and answers keywords,
all in one transaction. Nothing here waits on the network: a keyword's reply through the gateway is
queued like any send.
"""

from dataclasses import dataclass, field

from peewee import IntegrityError, fn

from shop import clock, queue
from shop.db import write_transaction
from shop.domain.actor import Actor
from shop.domain.events.outbox import emit
from shop.domain.messaging import keywords
from shop.domain.messaging.conversations import MESSAGE, conversation_for_customer
from shop.domain.messaging.sending import normalise_address
from shop.domain.notifications import create_notification
from shop.models import Conversation, Customer, Message, Tenant, TenantSmsNumber
from shop.platform.errors import ApiError

BODY_LIMIT = 100_000


@dataclass(frozen=True)
class InboundMessage:
    """One customer message as any provider delivered it."""

    channel: str  # sms or email
    provider_id: str  # the provider's message id (an email's Message-ID): a retry repeats it
    sender: str  # E.164 number or email address
    recipient: str  # our number or address
    body: str
    subject: str | None = None
    media_urls: tuple = ()
    attachments: tuple = ()
    in_reply_to: str | None = None
    full_text: str | None = None  # an email's whole text, when the body is its reply without the quote
    conversation_id: int | None = None  # known from a signed reply address
    tenant_id: str | None = None  # known from the recipient already (email)
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Received:
    """What receive() recorded: the message (the first one for a duplicate), and a keyword's reply."""

    message_id: int
    duplicate: bool
    reply: str | None = None
    reply_message_id: int | None = None


def tenant_for_number(number: str, param: str) -> str:
    """The tenant a number of `sms_numbers` belongs to, or 404 naming `param`."""
    found = TenantSmsNumber.get_or_none(TenantSmsNumber.number == normalise_address("sms", number))
    if found is None:
        raise ApiError(404, "not_found", "No shop answers at this number.", param=param)
    return found.tenant_id


def receive(inbound: InboundMessage, actor: Actor, reply_inline: bool = False) -> Received:
    """Record an inbound message (once), notify, and answer a keyword. `reply_inline`: the
    provider sends the reply in its response (Twilio's TwiML), else it is queued as a send."""
    tenant = Tenant.get_by_id(inbound.tenant_id)
    key = f"{inbound.channel}:{actor.name}:{inbound.provider_id}"[:255]
    with write_transaction():
        first = Message.for_tenant(tenant.id).where(Message.inbound_key == key).first()
        if first is not None:
            return Received(first.id, True)
        try:
            with write_transaction():  # a savepoint: a concurrent retry's insert wins the key
                message, conversation = _record(tenant.id, inbound, key)
        except IntegrityError:
            first = Message.for_tenant(tenant.id).where(Message.inbound_key == key).first()
            return Received(first.id, True)
        emit(tenant.id, "message.received", {**MESSAGE.dump(message), "source_kind": "observed"})
        _notify(tenant.id, message, conversation)
        answer = keywords.answer(tenant, inbound, conversation) if inbound.channel == "sms" else None
        if answer is None:
            return Received(message.id, False)
        reply = _reply(tenant.id, conversation, inbound, answer.text, reply_inline)
        answer.after_reply()  # STOP suppresses only once its confirmation is on its way
        return Received(message.id, False, answer.text, reply.id)


def _record(tenant_id: str, inbound: InboundMessage, key: str) -> tuple[Message, Conversation]:
    conversation = _conversation(tenant_id, inbound)
    now = clock.now()
    message = Message.create(
        tenant=tenant_id,
        conversation=conversation,
        channel=inbound.channel,
        direction="inbound",
        body=inbound.body,
        subject=inbound.subject,
        sender=inbound.sender,
        recipient=inbound.recipient or None,
        full_body=inbound.full_text if inbound.full_text != inbound.body else None,
        external_uuid=inbound.provider_id[:255],
        in_reply_to=inbound.in_reply_to,
        message_id_header=inbound.provider_id if inbound.channel == "email" else None,
        media_urls=list(inbound.media_urls) or None,
        attachments=list(inbound.attachments) or None,
        inbound_key=key,
        read=False,
        created_at=now,
    )
    conversation.last_inbound_at = conversation.updated_at = now
    conversation.save()
    return message, conversation


def customers_at(tenant_id: str, channel: str, address: str):
    """The tenant's customers with this phone number or email address."""
    if channel == "sms":
        return Customer.for_tenant(tenant_id).where(Customer.phone == address).order_by(Customer.id)
    return (
        Customer.for_tenant(tenant_id)
        .where(fn.LOWER(Customer.email) == address.lower())
        .order_by(Customer.id)
    )


def _conversation(tenant_id: str, inbound: InboundMessage) -> Conversation:
    """The thread named by a signed reply address, else the sender's customer's, else the unlinked
    thread this sender wrote in before, else a new unlinked one."""
    if inbound.conversation_id is not None:
        found = Conversation.for_tenant(tenant_id).where(Conversation.id == inbound.conversation_id).first()
        if found is not None:
            return found
    customer = customers_at(tenant_id, inbound.channel, inbound.sender).first()
    if customer is not None:
        return conversation_for_customer(tenant_id, customer)
    earlier = (
        Message.for_tenant(tenant_id)
        .join(Conversation)
        .where(
            (Message.sender == inbound.sender)
            & (Message.direction == "inbound")
            & Conversation.customer.is_null()
        )
        .order_by(Message.id.desc())
        .first()
    )
    if earlier is not None:
        return earlier.conversation
    email = inbound.sender if inbound.channel == "email" else None
    return Conversation.create(tenant=tenant_id, customer=None, customer_email=email, customer_name=None)


def _notify(tenant_id: str, message: Message, conversation: Conversation) -> None:
    """The global inbox row `message_received`."""
    who = conversation.customer_name or message.sender
    create_notification(
        tenant_id,
        {
            "scope": "global",
            "user_email": None,
            "ticket_id": None,
            "type": "message_received",
            "message": f"New {message.channel} message from {who}",
            "from_email": message.sender if message.channel == "email" else None,
            "details": {
                "conversation_id": conversation.id,
                "message_id": message.id,
                "channel": message.channel,
            },
        },
    )


def _reply(tenant_id, conversation, inbound: InboundMessage, text: str, inline: bool) -> Message:
    """A keyword's answer, recorded in the thread: queued for the consumer, or already handed to
    the provider in its response (`sent`)."""
    now = clock.now()
    reply = Message.create(
        tenant=tenant_id,
        conversation=conversation,
        channel="sms",
        direction="outbound",
        body=text,
        sender=inbound.recipient,
        recipient=inbound.sender,
        read=True,
        created_at=now,
        delivery_status="sent" if inline else "queued",
        delivery_attempts=0,
        next_attempt_at=None if inline else now,
    )
    conversation.last_outbound_at = conversation.updated_at = now
    conversation.save()
    if not inline:
        queue.enqueue(queue.SEND_MESSAGE, reply.id)  # commits with the reply
    return reply

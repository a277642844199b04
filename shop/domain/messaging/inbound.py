"""Inbound messages: what every provider adapter hands in (one InboundMessage), and its rules.

The adapters (shop/inbound/twilio.py, gateway.py, email.py) verify and parse their format; this
module finds the tenant, the customer and the conversation, records the message once (a provider
retry is a duplicate), emits `message.received`, adds the inbox notification and answers keywords,
all in one transaction. Nothing here waits on the network: a keyword's reply through the gateway is
queued like any send.
"""

from dataclasses import dataclass, field

from peewee import IntegrityError

from shop import clock, queue
from shop.db import named_sql, run_sql, write_transaction
from shop.domain.actor import Actor
from shop.domain.events.outbox import emit, subscriptions_ahead
from shop.domain.messaging import keywords
from shop.domain.messaging.conversations import MESSAGE, conversation_for_customer
from shop.domain.messaging.sending import normalise_address
from shop.domain.notifications import create_notification
from shop.models import Conversation, Customer, Message
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


# every inbound message runs these: constant SQL the driver prepares once (the query builder cost
# more than the statements; docs/performance.md, Inbound messaging)
NUMBER_SQL = named_sql("SELECT tenant_id FROM tenant_sms_number WHERE number = :number")
FIRST_WITH_KEY_SQL = named_sql("SELECT id FROM message WHERE tenant_id = :tenant AND inbound_key = :key")
# the sender's first customer (by id) with that customer's first conversation, if any, in one read
_CUSTOMER_THREAD = (
    f"SELECT {Customer.columns('c')}, {Conversation.columns('v')} FROM customer AS c "
    "LEFT JOIN conversation AS v ON v.tenant_id = c.tenant_id AND v.customer_id = c.id "
    "WHERE c.tenant_id = :tenant AND {address} ORDER BY c.id, v.id LIMIT 1"
)
CUSTOMER_THREAD_SQL = {
    "sms": named_sql(_CUSTOMER_THREAD.format(address="c.phone = :address")),
    "email": named_sql(_CUSTOMER_THREAD.format(address="LOWER(c.email) = :address")),
}
TOUCH_SQL = named_sql("UPDATE conversation SET last_inbound_at = :now, updated_at = :now WHERE id = :id")


def tenant_for_number(number: str, param: str) -> str:
    """The tenant a number of `sms_numbers` belongs to, or 404 naming `param`."""
    rows = run_sql(NUMBER_SQL, {"number": normalise_address("sms", number)})
    if not rows:
        raise ApiError(404, "not_found", "No shop answers at this number.", param=param)
    return rows[0][0]


def receive(inbound: InboundMessage, actor: Actor, reply_inline: bool = False) -> Received:
    """Record an inbound message (once), notify, and answer a keyword. `reply_inline`: the
    provider sends the reply in its response (Twilio's TwiML), else it is queued as a send."""
    tenant_id = inbound.tenant_id
    key = f"{inbound.channel}:{actor.name}:{inbound.provider_id}"[:255]
    try:
        with write_transaction():
            first = run_sql(FIRST_WITH_KEY_SQL, {"tenant": tenant_id, "key": key})
            if first:
                return Received(first[0][0], True)
            subscriptions = subscriptions_ahead(tenant_id)
            message, conversation = _record(tenant_id, inbound, key)
            data = {**MESSAGE.dump(message), "source_kind": "observed"}
            emit(tenant_id, "message.received", data, subscriptions)
            _notify(tenant_id, message, conversation)
            answer = keywords.answer(tenant_id, inbound) if inbound.channel == "sms" else None
            if answer is None:
                return Received(message.id, False)
            reply = _reply(tenant_id, conversation, inbound, answer.text, reply_inline)
            answer.after_reply()  # STOP suppresses only once its confirmation is on its way
            return Received(message.id, False, answer.text, reply.id)
    except IntegrityError:
        # rolled back whole; a concurrent retry's insert won the key (PostgreSQL: SQLite's write lock
        # lets one writer read and insert), so its message stands; any other error is raised again
        first = run_sql(FIRST_WITH_KEY_SQL, {"tenant": tenant_id, "key": key})
        if not first:
            raise
        return Received(first[0][0], True)


def _record(tenant_id: str, inbound: InboundMessage, key: str) -> tuple[Message, Conversation]:
    conversation = _conversation(tenant_id, inbound)
    now = clock.now()
    message = Message.create_row(
        tenant=tenant_id,
        conversation=conversation.id,
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
    run_sql(TOUCH_SQL, {"id": conversation.id, "now": now})
    conversation.last_inbound_at = conversation.updated_at = now
    return message, conversation


def _conversation(tenant_id: str, inbound: InboundMessage) -> Conversation:
    """The thread named by a signed reply address, else the sender's customer's, else the unlinked
    thread this sender wrote in before, else a new unlinked one."""
    if inbound.conversation_id is not None:
        found = Conversation.for_tenant(tenant_id).where(Conversation.id == inbound.conversation_id).first()
        if found is not None:
            return found
    address = inbound.sender if inbound.channel == "sms" else inbound.sender.lower()
    rows = run_sql(CUSTOMER_THREAD_SQL[inbound.channel], {"tenant": tenant_id, "address": address})
    if rows:
        split = len(Customer._meta.sorted_fields)
        if rows[0][split] is not None:
            return Conversation.from_row(rows[0][split:])
        return conversation_for_customer(tenant_id, Customer.from_row(rows[0][:split]))
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

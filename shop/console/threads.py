"""The Conversations pages' data: a thread's messages with read and delivery state, and what the send
form offers (the customer's tickets and phone), read through the messaging domain functions."""

from schemas.messages import ConversationSchema, MessageSchema
from shop.domain.messaging import conversations
from shop.models import Customer, Message, Ticket

PAGE_SIZE = 50
TICKETS_OFFERED = 20
CONVERSATION = ConversationSchema()
MESSAGE = MessageSchema()
IN_FLIGHT = ("queued", "sending")


def shown_message(message: Message) -> dict:
    """A message as the API shows it, plus what staff need: read state, recipient, delivery."""
    return {
        **MESSAGE.dump(message),
        "read": message.read,
        "recipient": message.recipient,
        "delivery_status": message.delivery_status,
        "delivery_attempts": message.delivery_attempts,
        "delivery_error": message.delivery_error,
    }


def thread(tenant_id: str, conversation_id: int, cursor: str | None) -> dict:
    """A conversation of the tenant (404 otherwise), one page of its messages, and the send form's offers."""
    found = conversations.get_conversation(tenant_id, conversation_id)
    listed = conversations.list_messages(tenant_id, found.id, PAGE_SIZE, cursor)
    messages = [shown_message(m) for m in listed["data"]]
    return {
        "conversation": CONVERSATION.dump(found),
        "messages": messages,
        "has_more": listed["has_more"],
        "next_cursor": listed["next_cursor"],
        "in_flight": any(m["delivery_status"] in IN_FLIGHT for m in messages),
        "phone": _customer_phone(tenant_id, found.customer_id),
        "tickets": customer_tickets(tenant_id, found.customer_id),
    }


def _customer_phone(tenant_id: str, customer_id: int | None) -> str | None:
    if customer_id is None:
        return None
    customer = Customer.for_tenant(tenant_id).where(Customer.id == customer_id).first()
    return customer.phone if customer else None


def customer_tickets(tenant_id: str, customer_id: int | None) -> list[dict]:
    """The customer's newest visible tickets (the ones a send may name), for the form's suggestions."""
    if customer_id is None:
        return []
    query = (
        Ticket.for_tenant(tenant_id)
        .where((Ticket.customer == customer_id) & ~Ticket.hidden & ~Ticket.deleted)
        .order_by(Ticket.id.desc())
        .limit(TICKETS_OFFERED)
    )
    return [{"id": str(t.id), "subject": t.subject} for t in query]


def conversation_of(tenant_id: str, message_id: int) -> int:
    """The conversation a just-recorded message of the tenant belongs to."""
    found = Message.for_tenant(tenant_id).where(Message.id == message_id).first()
    return found.conversation_id

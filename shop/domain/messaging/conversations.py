"""The read side of messaging: conversations with their unread counts, and messages."""

from peewee import fn

from schemas.messages import MessageSchema
from shop import clock
from shop.db import write_transaction
from shop.domain.events.outbox import emit
from shop.models import Conversation, Customer, Message, User
from shop.platform.errors import ApiError, not_found
from shop.platform.pagination import paginate

CONVERSATION_ORDER = [(Conversation.updated_at, True), (Conversation.id, True)]
MESSAGE_ORDER = [(Message.created_at, True), (Message.id, True)]
# the REST message is also the message.* event data
MESSAGE = MessageSchema()


def _with_unread(query):
    """Conversations with unread_count: the number of unread inbound messages."""
    unread = Message.select(fn.COUNT(Message.id)).where(
        (Message.conversation == Conversation.id) & (Message.direction == "inbound") & ~Message.read
    )
    return query.select(Conversation, unread.alias("unread_count"))


def list_conversations(tenant_id: str, customer_id: int | None, limit: int, cursor: str | None) -> dict:
    """Conversations, most recently updated first, optionally of one customer."""
    query = _with_unread(Conversation.for_tenant(tenant_id))
    if customer_id is not None:
        query = query.where(Conversation.customer == customer_id)
    return paginate(query, CONVERSATION_ORDER, limit, cursor).envelope()


def get_conversation(tenant_id: str, conversation_id: int) -> Conversation:
    """One conversation of the tenant, or 404."""
    found = _with_unread(Conversation.for_tenant(tenant_id)).where(Conversation.id == conversation_id).first()
    if found is None:
        raise not_found("conversation", conversation_id)
    return found


def list_messages(tenant_id: str, conversation_id: int, limit: int, cursor: str | None) -> dict:
    """A conversation's messages, newest first."""
    conversation = get_conversation(tenant_id, conversation_id)
    query = Message.for_tenant(tenant_id).where(Message.conversation == conversation.id)
    return paginate(query, MESSAGE_ORDER, limit, cursor).envelope()


def get_message(tenant_id: str, message_id: int) -> Message:
    """One message of the tenant, or 404."""
    found = Message.for_tenant(tenant_id).where(Message.id == message_id).first()
    if found is None:
        raise not_found("message", message_id)
    return found


def conversation_for_customer(tenant_id: str, customer: Customer) -> Conversation:
    """The customer's thread, created if it does not exist yet (call inside a transaction)."""
    found = (
        Conversation.for_tenant(tenant_id)
        .where(Conversation.customer == customer.id)
        .order_by(Conversation.id)
        .first()
    )
    if found is not None:
        return found
    return Conversation.create(
        tenant=tenant_id,
        customer=customer.id,
        customer_email=customer.email,
        customer_name=customer.display_name,
    )


INBOUND_CHANNELS = ("sms", "email", "portal", "voice")


def _inbound_conversation(tenant_id: str, data: dict) -> Conversation:
    if data.get("conversation_id") is not None:
        found = Conversation.for_tenant(tenant_id).where(Conversation.id == data["conversation_id"]).first()
        if found is None:
            raise not_found("conversation", data["conversation_id"], "conversation_id")
        return found
    customer = Customer.for_tenant(tenant_id).where(Customer.id == data.get("customer_id")).first()
    if customer is None:
        raise ApiError(
            404,
            "not_found",
            "Give a conversation_id or the customer_id of a known customer.",
            param="customer_id",
        )
    return conversation_for_customer(tenant_id, customer)


def receive_message(tenant_id: str, data: dict) -> dict:
    """In-app activity: an inbound SMS, email or portal message lands in its conversation."""
    if data.get("channel") not in INBOUND_CHANNELS:
        raise ApiError(
            400, "invalid_field", f"channel must be one of {', '.join(INBOUND_CHANNELS)}.", param="channel"
        )
    if not isinstance(data.get("body"), str):
        raise ApiError(400, "invalid_field", "body must be a string.", param="body")
    conversation = _inbound_conversation(tenant_id, data)
    now = clock.now()
    message = Message.create(
        tenant=tenant_id,
        conversation=conversation,
        channel=data["channel"],
        direction="inbound",
        body=data["body"],
        subject=data.get("subject"),
        sender=data.get("sender"),
        message_id_header=data.get("message_id"),
        media_urls=data.get("media_urls"),
        attachments=data.get("attachments"),
        read=False,
        created_at=now,
    )
    conversation.last_inbound_at = conversation.updated_at = now
    conversation.save()
    data = MESSAGE.dump(message)
    emit(tenant_id, "message.received", {**data, "source_kind": "observed"})
    return data


def mark_read(tenant_id: str, conversation_id: int) -> Conversation:
    """Read every inbound message of the conversation: its unread_count falls to 0."""
    with write_transaction():
        conversation = get_conversation(tenant_id, conversation_id)
        Message.update(read=True).where(
            (Message.tenant == tenant_id)
            & (Message.conversation == conversation.id)
            & (Message.direction == "inbound")
            & ~Message.read
        ).execute()
    return get_conversation(tenant_id, conversation_id)


def assign(tenant_id: str, conversation_id: int, user_id: int | None) -> Conversation:
    """Give the conversation to a teammate of the shop (404 naming assigned_user_id otherwise), or
    to nobody (None)."""
    with write_transaction():
        conversation = get_conversation(tenant_id, conversation_id)
        if user_id is not None and not User.for_tenant(tenant_id).where(User.id == user_id).exists():
            raise not_found("user", user_id, "assigned_user_id")
        if conversation.assigned_user_id != user_id:
            Conversation.update(assigned_user_id=user_id, updated_at=clock.now()).where(
                Conversation.id == conversation.id
            ).execute()
    return get_conversation(tenant_id, conversation_id)

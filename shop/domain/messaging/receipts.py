"""Delivery receipts: a provider's word on an outbound message moves its delivery_status forward only."""

from shop.db import locked, write_transaction
from shop.domain.actor import Actor
from shop.domain.messaging import suppressions
from shop.domain.notifications import create_notification
from shop.models import Message
from shop.platform.errors import ApiError

# how far along a status is: a receipt moves a message only to a higher rank, so a late or repeated
# callback never moves it back; the three outcomes are final and the first one stays
RANK = {"queued": 0, "sending": 0, "logged": 1, "sent": 1, "delivered": 2, "undelivered": 2, "failed": 2}
FAILURES = ("undelivered", "failed")


def record_receipt(
    provider_id: str, status: str, error: str | None, opted_out: bool, actor: Actor, param: str
) -> Message:
    """Apply a provider's status to the outbound message it names (404 naming `param` when none);
    a failure adds `message_failed`, an opt-out suppresses the number."""
    with write_transaction():
        # provider ids are the provider's, across every tenant (the gateway's receipt names no shop)
        message = locked(
            Message.select().where((Message.external_uuid == provider_id) & (Message.direction == "outbound"))
        ).first()
        if message is None:
            raise ApiError(404, "not_found", "No message has this provider id.", param=param)
        if opted_out:
            suppressions.suppress(message.tenant_id, message.channel, message.recipient, "provider_opt_out")
        if RANK.get(status, -1) > RANK.get(message.delivery_status, 0):
            _move(message, status, error)
    return message


def _move(message: Message, status: str, error: str | None) -> None:
    message.delivery_status = status
    message.claimed_until = None
    if status in FAILURES:
        message.delivery_error = (error or status)[:1000]
        notify_failed(message)
    message.save()


def notify_failed(message: Message) -> None:
    """The global inbox row `message_failed` (inside the caller's transaction)."""
    create_notification(
        message.tenant_id,
        {
            "scope": "global",
            "user_email": None,
            "ticket_id": None,
            "type": "message_failed",
            "message": f"The {message.channel} message to {message.recipient} was not delivered "
            f"({message.delivery_status})",
            "from_email": None,
            "details": {
                "conversation_id": message.conversation_id,
                "message_id": message.id,
                "delivery_status": message.delivery_status,
                "delivery_error": message.delivery_error,
            },
        },
    )


def record_bounce(
    tenant_id: str,
    message_id: int | None,
    original_header: str | None,
    status: str | None,
    final_recipient: str | None,
    actor: Actor,
) -> Message | None:
    """A delivery status notification for one of our emails (named by its VERP address, else by
    the Message-ID it quotes): the message fails; a hard bounce (5.x.x) suppresses the address.
    A bounce of nothing of ours changes nothing (None)."""
    with write_transaction():
        query = Message.for_tenant(tenant_id).where(Message.direction == "outbound")
        if message_id is not None:
            query = query.where(Message.id == message_id)
        elif original_header:
            query = query.where(Message.message_id_header == original_header)
        else:
            return None
        message = locked(query).first()
        if message is None:
            return None
        hard = bool(status) and status.startswith("5.")
        if hard:
            suppressions.suppress(tenant_id, "email", final_recipient or message.recipient, "bounce")
        if RANK.get(message.delivery_status, 0) < RANK["failed"] or message.delivery_status == "delivered":
            _move(message, "failed", f"bounce {status}" if status else "bounce")
    return message

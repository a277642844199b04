"""Fixture sections of messaging: conversations with their messages, and suppressions."""

from datetime import datetime

from shop import clock
from shop.domain import fixture_rows as fixtures
from shop.domain.messaging.sending import normalise_address
from shop.models import Conversation, Customer, Message, Suppression


def load_conversation(path: str, tenant_id: str, item: dict, summary: dict) -> None:
    """A conversation, its messages, and the timestamps and counts they imply."""
    messages = item.pop("messages")
    customer = None
    if item.get("customer_id") is not None:
        customer = Customer.for_tenant(tenant_id).where(Customer.id == item["customer_id"]).first()
        if customer is None:
            raise fixtures.FixtureError(
                f"{path}.customer_id", f"no customer {item['customer_id']} in this tenant."
            )
        item.setdefault("customer_email", customer.email)
        item.setdefault("customer_name", customer.display_name)
    item["customer"] = item.pop("customer_id", None)
    item["created_at"] = _opened_at(path, item.get("created_at"), messages)
    conversation = fixtures.insert(path, Conversation.create, tenant=tenant_id, **item)
    conversation.updated_at = conversation.created_at  # then moved to its latest message
    for i, message in enumerate(messages):
        _load_message(f"{path}.messages[{i}]", tenant_id, conversation, dict(message))
    conversation.save()


def _opened_at(path: str, given: datetime | None, messages: list[dict]) -> datetime:
    """When a conversation began: as given, else its first dated message, else the load time.

    A thread cannot begin after its own first message: such a created_at is refused, not kept.
    """
    first = min((m["created_at"] for m in messages if m.get("created_at")), default=None)
    if given is not None and first is not None and given > first:
        raise fixtures.FixtureError(f"{path}.created_at", "is after the conversation's first message.")
    return given or first or clock.now()


def _load_message(path: str, tenant_id: str, conversation: Conversation, message: dict) -> None:
    message["message_id_header"] = message.pop("message_id", None)
    message["created_at"] = message.get("created_at") or conversation.created_at
    if message["direction"] == "outbound":
        message.setdefault("read", True)
        message["delivery_status"] = "sent"
    created = fixtures.insert(path, Message.create, tenant=tenant_id, conversation=conversation, **message)
    stamp = created.created_at
    if created.direction == "inbound":
        conversation.last_inbound_at = max(filter(None, [conversation.last_inbound_at, stamp]))
    else:
        conversation.last_outbound_at = max(filter(None, [conversation.last_outbound_at, stamp]))
    conversation.updated_at = max(filter(None, [conversation.updated_at, stamp]))


def load_suppression(path: str, tenant_id: str, item: dict, summary: dict) -> None:
    """An address the shop must not message on a channel."""
    address = normalise_address(item["channel"], item["address"])
    fixtures.insert(
        path,
        Suppression.create,
        tenant=tenant_id,
        channel=item["channel"],
        address=address,
        reason=item["reason"],
    )

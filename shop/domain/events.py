"""The events outbox: emit() records an event inside the caller's transaction."""

import secrets

from shop import clock
from shop.models import Event


def new_event_id() -> str:
    """evt_ and an unguessable token."""
    return "evt_" + secrets.token_hex(12)


def emit(tenant_id: str, type_: str, data: dict) -> Event:
    """Write the event in the current transaction; delivery follows from the outbox."""
    return Event.create(id=new_event_id(), tenant=tenant_id, type=type_, api_version="v1",
                        data=data, created=clock.now())


def envelope(event: Event) -> dict:
    """The event as subscribers receive it."""
    return {
        "object": "event",
        "id": event.id,
        "type": event.type,
        "created": clock.isoformat(event.created),
        "api_version": event.api_version,
        "data": event.data,
    }

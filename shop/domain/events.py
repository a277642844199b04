"""The events outbox: emit() records an event inside the caller's transaction."""

import secrets

from shop import clock
from shop.models import Event


def new_event_id() -> str:
    """evt_ and an unguessable token."""
    return "evt_" + secrets.token_hex(12)


def emit(tenant_id: str, type_: str, data: dict) -> Event:
    """Write the event and its deliveries in the caller's transaction; sending follows the commit."""
    from shop.domain.fanout import fan_out

    event = Event.insert_row(id=new_event_id(), tenant=tenant_id, type=type_, api_version="v1",
                             data=data, created=clock.now())
    fan_out(event)
    return event


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

"""The catalog of event types (the spec's Events table) and the read scope each family needs."""

# the table itself sits next to the Event model, so that schemas/ can read it without the domain
from shop.models.events import CATALOG, EVENT_TYPES, WILDCARD  # noqa: F401 (the catalog's names)

# the read scope a key must hold to subscribe to a family (spec, Authentication point 4)
FAMILY_SCOPES = {
    "customer": "customers.read",
    "ticket": "tickets.read",
    "invoice": "invoices.read",
    "estimate": "estimates.read",
    "payment": "payments.read",
    "appointment": "appointments.read",
    "lead": "leads.read",
    "message": "messages.read",
    "webhook": None,
}


def scope_for(event_type: str) -> str | None:
    """The read scope an event type's family needs (None for webhook.ping)."""
    return FAMILY_SCOPES[event_type.split(".", 1)[0]]


def required_scopes(events: list[str]) -> list[str]:
    """Every read scope a subscription to `events` needs, in a stable order."""
    types = EVENT_TYPES if WILDCARD in events else events
    scopes = {scope_for(event_type) for event_type in types} - {None}
    return sorted(scopes)


def matches(events: list[str], event_type: str) -> bool:
    """Whether a subscription's events include this event type."""
    return WILDCARD in events or event_type in events

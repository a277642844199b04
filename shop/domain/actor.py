"""Who caused a change: one value every face hands to domain functions (STYLE.md, "One actor value").

The API passes `api_key(g.api_key.id)`, the console `teammate(email, source)`, the portal and the
booking page `customer(...)`, inbound provider webhooks `provider(name)`, `shop activity` the
`changed_by`/`change_source` it was given, jobs `SYSTEM`. Domain functions turn it into the events'
`changed_by`, `change_source`, `approved_by`/`declined_by`, an appointment's `source` and a staff
notice's `details.source`, in one place each, never from strings passed around.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Actor:
    """kind: `api_key`, `teammate`, `customer`, `provider`, `in_app` or `system`; name: who, as events
    name them (the key's id, the teammate's email, `customer`, `system`); source: the face or
    origin (`api`, `queue_drag`, `ticket_panel`, `dashboard`, `online_booking`, `portal`, ...)."""

    kind: str
    name: str
    source: str

    @property
    def api_driven(self) -> bool:
        """Whether the public API caused it (the spec's rules for API-driven changes)."""
        return self.kind == "api_key"


def api_key(key_id: str) -> Actor:
    """An API key: `changed_by`/`approved_by` are the key's id, `change_source` is `api`."""
    return Actor("api_key", key_id, "api")


def teammate(email: str, source: str = "dashboard") -> Actor:
    """A signed-in teammate in the front office (source: `queue_drag`, `ticket_panel`, `dashboard`)."""
    return Actor("teammate", email, source)


def customer(source: str = "portal") -> Actor:
    """A customer on the shop's pages (`portal`, `online_booking`) or by message (`sms`, `email`)."""
    return Actor("customer", "customer", source)


def provider(name: str) -> Actor:
    """A messaging provider's webhook (`twilio`, `gateway`, `email`)."""
    return Actor("provider", name, name)


def in_app(changed_by: str, change_source: str = "in_app") -> Actor:
    """`shop activity`: what staff and customers did outside the API, as its --data names them."""
    return Actor("in_app", changed_by, change_source)


SYSTEM = Actor("system", "system", "system")

"""The catalog of event types (the spec's Events table) and the read scope each family needs."""

# (type, fires when, data.object); the order is the spec's and the order of the live list
CATALOG = (
    ("customer.created", "A customer was created.", "customer"),
    ("customer.updated", "A customer was updated.", "customer"),
    ("ticket.created", "A repair ticket was created.", "ticket"),
    ("ticket.updated", "Ticket fields other than status were updated.", "ticket"),
    ("ticket.status_changed", "A ticket's status or stage changed.", "ticket"),
    ("invoice.created", "An invoice was created.", "invoice"),
    ("invoice.sent", "An invoice was sent.", "invoice"),
    ("invoice.paid", "An invoice was fully paid.", "invoice"),
    ("invoice.voided", "An invoice was voided.", "invoice"),
    ("invoice.refunded", "An invoice was refunded, fully or partially.", "invoice"),
    ("estimate.sent", "An estimate was sent.", "estimate"),
    ("estimate.approved", "The customer approved an estimate.", "estimate"),
    ("estimate.declined", "The customer declined an estimate.", "estimate"),
    ("payment.recorded", "A payment was recorded against an invoice.", "payment"),
    ("payment.refunded", "A payment was refunded, fully or partially.", "refund"),
    ("appointment.created", "An appointment was booked (API, dashboard or online booking).", "appointment"),
    ("appointment.updated", "An appointment was rescheduled, edited, linked to a ticket or un-cancelled.",
     "appointment"),
    ("appointment.canceled", "An appointment was canceled (API or dashboard).", "appointment"),
    ("appointment.completed", "An appointment was completed.", "appointment"),
    ("appointment.no_show", "An appointment was marked no-show.", "appointment"),
    ("lead.created", "A lead was captured.", "lead"),
    ("lead.updated", "A lead was updated.", "lead"),
    ("lead.converted", "A lead was converted to a repair ticket.", "lead"),
    ("message.received", "An inbound customer message arrived (SMS, email or portal).", "message"),
    ("message.sent", "An outbound SMS or email was sent.", "message"),
    ("webhook.ping", "A synthetic test event sent by the ping endpoint.", None),
)
EVENT_TYPES = tuple(entry[0] for entry in CATALOG)
WILDCARD = "*"

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


def event_type_dto(entry: tuple) -> dict:
    """A webhook_event_type object."""
    type_, description, data_object = entry
    return {"object": "webhook_event_type", "type": type_, "description": description,
            "data_object": data_object}


def matches(events: list[str], event_type: str) -> bool:
    """Whether a subscription's events include this event type."""
    return WILDCARD in events or event_type in events

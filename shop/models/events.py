"""The events outbox: every emitted event, written in the transaction of the change."""

from typing import NamedTuple

from peewee import CharField, ForeignKeyField

from shop import clock
from shop.models.base import BaseModel, JSONField, UTCDateTimeField
from shop.models.tenancy import Tenant


class EventType(NamedTuple):
    """One row of the catalog: the type, when it fires, and its data.object."""

    type: str
    description: str
    data_object: str | None


# (type, fires when, data.object); the order is the spec's and the order of the live list
CATALOG = tuple(
    EventType(*row)
    for row in (
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
        (
            "appointment.created",
            "An appointment was booked (API, dashboard or online booking).",
            "appointment",
        ),
        (
            "appointment.updated",
            "An appointment was rescheduled, edited, linked to a ticket or un-cancelled.",
            "appointment",
        ),
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
)
EVENT_TYPES = tuple(entry[0] for entry in CATALOG)
WILDCARD = "*"


class Event(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, backref="events", on_delete="CASCADE")
    type = CharField(max_length=64)  # no index: nothing looks events up by type (migration 0008)
    api_version = CharField(max_length=8, default="v1")
    data = JSONField()
    created = UTCDateTimeField(default=clock.now, index=True)  # the retention prune reads it

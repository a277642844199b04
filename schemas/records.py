"""The shop's records as the API answers them and their events carry them: tickets, invoices,
payments, refunds, estimates and leads (customers: schemas/customers.py). Ids are strings; amounts
are in the currency's minor unit.

The domain dumps these for event data (`data.object`) and the routes for their answers, so an
event's data is the GET answer; sums it reads from other rows (an invoice's amount_paid, a
payment's refunds and status) it sets on the record before the dump.

The first part holds what every record resource's bodies and queries share (the money resources
too): `RecordRef` for a record named in a body, `text()`, `email()`, `StrictBool`, `Timestamp`,
`RecordUpdateSchema` and `RecordQueryArgsSchema` with `RecordRefQuery` for filters.
"""

import marshmallow as ma

from schemas.billing import LineItemSchema
from schemas.common import (
    INT32_MAX,
    Int32,
    PaginationArgsSchema,
    QueryInt32,
    Schema,
    Stamp,
    UtcDateTime,
    list_schema,
)
from shop.models.leads import LEAD_STATUSES
from shop.models.records import TICKET_PRIORITIES
from shop.platform.ids import ID_PATTERN
from shop.platform.validation import INT32_MESSAGE

Str = ma.fields.String
STAMP_EXAMPLE = "2026-11-01T10:00:00.000Z"

# shared by every record resource's bodies and queries


class RecordRef(ma.fields.Field):
    """A record named in a body (customer_id, ticket_id, invoice_id, ...): its id as the digit string
    the API answers with, or as a JSON integer; loaded as the integer (1 to 2,147,483,647)."""

    OPENAPI = {
        "anyOf": [
            {"type": "string", "pattern": ID_PATTERN, "maxLength": 10},
            {"type": "integer", "minimum": 1, "maximum": INT32_MAX},
        ],
        "example": "1",
    }

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20:
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ma.ValidationError(f"Must be a record id: a digit string or integer from 1 to {INT32_MAX}.")
        if value > INT32_MAX:
            raise ma.ValidationError(INT32_MESSAGE)  # 400 invalid_value, as for any 32-bit overflow
        return value


class StrictBool(ma.fields.Boolean):
    """JSON true or false, nothing else (no "yes", 1 or "true")."""

    OPENAPI = {"type": "boolean"}

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise ma.ValidationError("Must be true or false.")
        return value


def text(max_length: int, required: bool = False, allow_none: bool = True, minimum: int = 0, **kwargs):
    """A free-text body field of at most `max_length` characters (null allowed unless said)."""
    return Str(
        required=required,
        allow_none=allow_none,
        validate=ma.validate.Length(min=minimum, max=max_length),
        **kwargs,
    )


def email(**kwargs):
    """An email address (at most 320 characters) or null."""
    return Str(
        allow_none=True,
        validate=[ma.validate.Length(max=320), ma.validate.Email()],
        metadata={"format": "email", "example": "ann@example.com"},
        **kwargs,
    )


class Timestamp(UtcDateTime):
    """An ISO 8601 timestamp in a body (UTC unless it says otherwise)."""

    OPENAPI = {"type": "string", "format": "date-time", "example": "2026-12-01T17:00:00Z"}


class RecordUpdateSchema(Schema):
    """A PATCH body: the fields sent change, the ones left out stay; an empty body changes nothing."""


class RecordRefQuery(QueryInt32):
    """A filter naming a record (`customer_id=1`): 1 to 2,147,483,647 written in plain digits."""


class RecordQueryArgsSchema(PaginationArgsSchema):
    """limit and cursor; a resource adds its filters (each strictly read: a bad one is 400)."""


def record_list(item_schema, name: str):
    """The list envelope of a record resource (for the document)."""
    return list_schema(item_schema, name)


# what the API answers and the events carry


class TicketSchema(Schema):
    """A ticket, as GET /tickets/<id> answers and ticket.created and ticket.updated carry it."""

    object = ma.fields.Constant("ticket")
    id = Str(metadata={"example": "1001"})
    customer_id = Str(allow_none=True, metadata={"example": "1"})
    subject = Str(allow_none=True, metadata={"example": "Cracked screen"})
    status = Str(allow_none=True, metadata={"example": "In Progress"})
    created_at = Stamp(allow_none=True, metadata={"example": STAMP_EXAMPLE})
    updated_at = Stamp(allow_none=True, metadata={"example": STAMP_EXAMPLE})
    description = Str(allow_none=True, metadata={"example": "Dropped; the touch screen still works."})
    device = Str(allow_none=True, metadata={"example": "iPhone 13"})
    serial_number = Str(allow_none=True, metadata={"example": "F17GQ0ABCD12"})
    assigned_user_id = ma.fields.Integer(allow_none=True, metadata={"example": 7})
    priority = Str(metadata={"example": "normal"})
    due_at = Stamp(allow_none=True, metadata={"example": "2026-11-03T17:00:00.000Z"})


class InvoiceSchema(Schema):
    """invoice.*: amount_paid, amount_refunded and amount_due are set by the domain."""

    object = ma.fields.Constant("invoice")
    id = Str()
    number = Str(allow_none=True)
    customer_id = Str(allow_none=True)
    ticket_id = Str(allow_none=True)
    status = Str()
    currency = Str()
    line_items = ma.fields.List(ma.fields.Nested(LineItemSchema))
    total = ma.fields.Integer()
    amount_paid = ma.fields.Integer()
    amount_refunded = ma.fields.Integer()
    amount_due = ma.fields.Integer()
    sent_at = Stamp(allow_none=True)
    paid_at = Stamp(allow_none=True)
    voided_at = Stamp(allow_none=True)
    void_reason = Str(allow_none=True)
    created_at = Stamp(allow_none=True)
    updated_at = Stamp(allow_none=True)


class PaymentSchema(Schema):
    """payment.recorded (no card data is ever stored): amount_refunded and status are set by the domain."""

    object = ma.fields.Constant("payment")
    id = Str()
    invoice_id = Str()
    customer_id = Str(attribute="invoice.customer_id", allow_none=True)
    amount = ma.fields.Integer()
    amount_refunded = ma.fields.Integer()
    currency = Str(attribute="invoice.currency")
    method = Str(allow_none=True)
    status = Str()
    created_at = Stamp(allow_none=True)


class RefundSchema(Schema):
    """payment.refunded (data.object `refund`)."""

    object = ma.fields.Constant("refund")
    id = Str()
    payment_id = Str()
    invoice_id = Str(attribute="payment.invoice_id")
    amount = ma.fields.Integer()
    currency = Str(attribute="payment.invoice.currency")
    reason = Str(allow_none=True)
    status = ma.fields.Constant("succeeded")
    created_at = Stamp(allow_none=True)


class EstimateSchema(Schema):
    """estimate.sent; the decision's evidence is never part of it."""

    object = ma.fields.Constant("estimate")
    id = Str()
    number = Str(allow_none=True)
    ticket_id = Str()
    customer_id = Str(allow_none=True)
    status = Str()
    currency = Str(allow_none=True)
    line_items = ma.fields.List(ma.fields.Nested(LineItemSchema))
    total = ma.fields.Integer(allow_none=True)
    sent_at = Stamp(allow_none=True)
    approved_at = Stamp(allow_none=True)
    approved_by = Str(allow_none=True)
    declined_at = Stamp(allow_none=True)
    declined_by = Str(allow_none=True)
    decline_reason = Str(allow_none=True)
    created_at = Stamp(allow_none=True)
    updated_at = Stamp(allow_none=True)


class LeadSchema(Schema):
    """A lead, as GET /leads/<id> answers and lead.created, lead.updated and lead.converted carry it."""

    object = ma.fields.Constant("lead")
    id = Str(metadata={"example": "6001"})
    name = Str(allow_none=True, metadata={"example": "Cy Park"})
    email = Str(allow_none=True, metadata={"example": "cy@example.com"})
    phone = Str(allow_none=True, metadata={"example": "+15555550102"})
    source = Str(allow_none=True, metadata={"example": "web_form"})
    status = Str(metadata={"example": "new"})
    customer_id = Str(allow_none=True, metadata={"example": None})
    converted_ticket_id = Str(allow_none=True, metadata={"example": None})
    converted_at = Stamp(allow_none=True, metadata={"example": None})
    created_at = Stamp(allow_none=True, metadata={"example": STAMP_EXAMPLE})
    updated_at = Stamp(allow_none=True, metadata={"example": None})


# ticket bodies and filters

TICKET_STATUS_TEXT = (
    "One of the shop's ticket statuses (its `ticket_statuses`; by default New, In Progress, Waiting "
    "for Parts, Ready, Resolved), else 400 invalid_field."
)


def _ticket_status(**kwargs):
    return text(64, allow_none=False, minimum=1, metadata={"description": TICKET_STATUS_TEXT}, **kwargs)


def _ticket_fields() -> dict:
    """The fields a ticket create and update both take (subject and status aside)."""
    return {
        "customer_id": RecordRef(allow_none=True, metadata={"description": "A customer of the shop."}),
        "description": text(10_000),
        "device": text(255),
        "serial_number": text(255),
        "assigned_user_id": Int32(
            allow_none=True,
            metadata={"description": "A teammate of the shop (else 400 invalid_field), or null."},
        ),
        "priority": Str(validate=ma.validate.OneOf(TICKET_PRIORITIES)),
        "due_at": Timestamp(allow_none=True),
    }


TicketCreateSchema = Schema.from_dict(
    {
        "subject": text(255, required=True, allow_none=False, minimum=1),
        "status": _ticket_status(),
        **_ticket_fields(),
    },
    name="TicketCreateSchema",
)
TicketUpdateSchema = RecordUpdateSchema.from_dict(
    {"subject": text(255, allow_none=False, minimum=1), "status": _ticket_status(), **_ticket_fields()},
    name="TicketUpdateSchema",
)


class TicketQueryArgsSchema(RecordQueryArgsSchema):
    status = Str(validate=ma.validate.Length(min=1, max=64), metadata={"description": "Exact status name."})
    customer_id = RecordRefQuery()


TicketListSchema = record_list(TicketSchema, "TicketListSchema")


# lead bodies and filters

OPEN_LEAD_STATUSES = [status for status in LEAD_STATUSES if status != "converted"]


def _lead_fields() -> dict:
    return {
        "email": email(),
        "phone": text(50),
        "source": text(64, metadata={"example": "web_form"}),
        "status": Str(
            validate=ma.validate.OneOf(OPEN_LEAD_STATUSES),
            metadata={"description": "converted only through POST /leads/<id>/convert."},
        ),
    }


LeadCreateSchema = Schema.from_dict(
    {"name": text(255, required=True, allow_none=False, minimum=1), **_lead_fields()},
    name="LeadCreateSchema",
)
LeadUpdateSchema = RecordUpdateSchema.from_dict(
    {"name": text(255, allow_none=False, minimum=1), **_lead_fields()}, name="LeadUpdateSchema"
)


class LeadConvertSchema(Schema):
    """All optional: a new customer from the lead and a new ticket unless ids are given."""

    customer_id = RecordRef(metadata={"description": "An existing customer to convert onto."})
    ticket_id = RecordRef(metadata={"description": "An existing visible ticket to link."})
    subject = text(255, allow_none=False, minimum=1, metadata={"description": "The new ticket's subject."})


class LeadQueryArgsSchema(RecordQueryArgsSchema):
    status = Str(validate=ma.validate.OneOf(LEAD_STATUSES))


LeadListSchema = record_list(LeadSchema, "LeadListSchema")

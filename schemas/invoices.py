"""Invoice bodies and filters; the invoice itself is schemas.records.InvoiceSchema."""

import marshmallow as ma

from schemas.billing import BodyRecordId, ReasonSchema, currency, id_filter, line_items, require_a_field
from schemas.common import PaginationArgsSchema, Schema, list_schema
from schemas.records import InvoiceSchema
from shop.models.billing import INVOICE_STATUSES


class InvoiceQueryArgsSchema(PaginationArgsSchema):
    ticket_id = id_filter("invalid_ticket_id")
    customer_id = id_filter("invalid_customer_id")
    status = ma.fields.String(
        validate=ma.validate.OneOf(INVOICE_STATUSES), metadata={"error_code": "invalid_status"}
    )


class InvoiceCreateSchema(Schema):
    """A ticket, a customer or both (the ticket's customer by default); priced by its line items."""

    ticket_id = BodyRecordId(allow_none=True)
    customer_id = BodyRecordId(allow_none=True)
    line_items = line_items(required=True)
    currency = currency(load_default="usd")


class InvoiceUpdateSchema(Schema):
    OPENAPI = {"minProperties": 1}  # an empty body is 400 no_fields

    line_items = line_items()
    currency = currency()

    require_a_known_field = require_a_field("invoice")


class InvoiceVoidSchema(ReasonSchema):
    """POST /invoices/<id>/void: why, if said (at most 500 characters)."""


InvoiceListSchema = list_schema(InvoiceSchema, "InvoiceListSchema")

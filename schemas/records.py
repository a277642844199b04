"""Records with no REST endpoint, as their events carry them: tickets, invoices, payments, refunds,
estimates and leads. Ids are strings; amounts are in the currency's minor unit.

The domain dumps these for event data (`data.object`); sums it reads from other rows (an invoice's
amount_paid, a payment's refunds and status) it sets on the record before the dump.
"""

import marshmallow as ma

from schemas.billing import LineItemSchema
from schemas.common import Schema, Stamp

Str = ma.fields.String


class TicketSchema(Schema):
    """ticket.created and ticket.updated."""

    object = ma.fields.Constant("ticket")
    id = Str()
    customer_id = Str(allow_none=True)
    subject = Str(allow_none=True)
    status = Str(allow_none=True)
    created_at = Stamp(allow_none=True)
    updated_at = Stamp(allow_none=True)


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
    """lead.created, lead.updated and lead.converted."""

    object = ma.fields.Constant("lead")
    id = Str()
    name = Str(allow_none=True)
    email = Str(allow_none=True)
    phone = Str(allow_none=True)
    source = Str(allow_none=True)
    status = Str()
    customer_id = Str(allow_none=True)
    converted_ticket_id = Str(allow_none=True)
    converted_at = Stamp(allow_none=True)
    created_at = Stamp(allow_none=True)
    updated_at = Stamp(allow_none=True)

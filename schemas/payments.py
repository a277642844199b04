"""Payment and refund bodies and filters; the records themselves are schemas.records' schemas."""

import marshmallow as ma

from schemas.billing import REASON_MAX, Amount, BodyRecordId, id_filter, text
from schemas.common import PaginationArgsSchema, Schema, list_schema
from schemas.records import PaymentSchema, RefundSchema
from shop.models.billing import PAYMENT_METHODS


class PaymentQueryArgsSchema(PaginationArgsSchema):
    invoice_id = id_filter("invalid_invoice_id")


class PaymentCreateSchema(Schema):
    """A payment taken outside the service (no card data is ever sent or stored)."""

    invoice_id = BodyRecordId(required=True)
    amount = Amount(minimum=1, required=True)
    method = ma.fields.String(
        required=True, validate=ma.validate.OneOf(PAYMENT_METHODS), metadata={"example": "card"}
    )


class RefundQueryArgsSchema(PaginationArgsSchema):
    payment_id = id_filter("invalid_payment_id")


class RefundCreateSchema(Schema):
    """A refund of a payment: `amount` (all that is left of it when left out) and a reason."""

    payment_id = BodyRecordId(required=True)
    amount = Amount(minimum=1)
    reason = text(REASON_MAX, allow_none=True, load_default=None, metadata={"example": "Customer returned"})


PaymentListSchema = list_schema(PaymentSchema, "PaymentListSchema")
RefundListSchema = list_schema(RefundSchema, "RefundListSchema")

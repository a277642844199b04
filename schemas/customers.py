"""Customer list items, the customer as its GET answers and customer.* events carry it, and its bodies."""

import marshmallow as ma

from schemas.common import PaginationArgsSchema, Schema, Stamp, list_schema
from schemas.records import RecordUpdateSchema, StrictBool, email, text


class CustomerSchema(Schema):
    object = ma.fields.Constant("customer")
    id = ma.fields.String(metadata={"example": "1"})
    display_name = ma.fields.String(allow_none=True, metadata={"example": "Ann Lee"})
    email = ma.fields.String(allow_none=True, metadata={"example": "ann@example.com"})
    created_at = Stamp(metadata={"example": "2026-11-01T10:00:00.000Z"})


class CustomerRecordSchema(CustomerSchema):
    """GET /customers/<id> and the customer.* event data: the list item plus phone, consent, where
    the customer came from (source) and updated_at."""

    phone = ma.fields.String(allow_none=True, metadata={"example": "+15555550100"})
    sms_consent = ma.fields.Boolean(metadata={"example": True})
    source = ma.fields.String(allow_none=True, metadata={"example": "walk_in"})
    updated_at = Stamp(allow_none=True, metadata={"example": None})


def _customer_fields() -> dict:
    return {
        "email": email(),
        "phone": text(50),
        "sms_consent": StrictBool(),
        "source": text(64, metadata={"example": "walk_in"}),
    }


CustomerCreateSchema = Schema.from_dict(
    {
        "display_name": text(255, required=True, allow_none=False, minimum=1),
        **_customer_fields(),
        "sms_consent": StrictBool(load_default=False),
    },
    name="CustomerCreateSchema",
)
CustomerUpdateSchema = RecordUpdateSchema.from_dict(
    {"display_name": text(255, allow_none=False, minimum=1), **_customer_fields()},
    name="CustomerUpdateSchema",
)


class CustomerQueryArgsSchema(PaginationArgsSchema):
    pass


CustomerListSchema = list_schema(CustomerSchema, "CustomerListSchema")

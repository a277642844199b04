"""Customer list items, and the customer as customer.* events carry it."""

import marshmallow as ma

from schemas.common import PaginationArgsSchema, Schema, Stamp, list_schema


class CustomerSchema(Schema):
    object = ma.fields.Constant("customer")
    id = ma.fields.String(metadata={"example": "1"})
    display_name = ma.fields.String(allow_none=True, metadata={"example": "Ann Lee"})
    email = ma.fields.String(allow_none=True, metadata={"example": "ann@example.com"})
    created_at = Stamp(metadata={"example": "2026-11-01T10:00:00.000Z"})


class CustomerRecordSchema(CustomerSchema):
    """The customer.* event data: the list item plus phone, consent and updated_at."""

    phone = ma.fields.String(allow_none=True)
    sms_consent = ma.fields.Boolean()
    updated_at = Stamp(allow_none=True)


class CustomerQueryArgsSchema(PaginationArgsSchema):
    pass


CustomerListSchema = list_schema(CustomerSchema, "CustomerListSchema")

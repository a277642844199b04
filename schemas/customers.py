"""Customer list items."""

import marshmallow as ma

from schemas.common import PaginationArgsSchema, Schema, list_schema


class CustomerSchema(Schema):
    object = ma.fields.Constant("customer")
    id = ma.fields.String(metadata={"example": "1"})
    display_name = ma.fields.String(allow_none=True, metadata={"example": "Ann Lee"})
    email = ma.fields.String(allow_none=True, metadata={"example": "ann@example.com"})
    created_at = ma.fields.String(metadata={"example": "2026-11-01T10:00:00.000Z"})


class CustomerQueryArgsSchema(PaginationArgsSchema):
    pass


CustomerListSchema = list_schema(CustomerSchema, "CustomerListSchema")

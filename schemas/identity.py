"""The key identity object returned by GET /api/v1/me."""

import marshmallow as ma

from schemas.common import Schema


class ApiKeyIdentitySchema(Schema):
    object = ma.fields.Constant("api_key")
    id = ma.fields.String(metadata={"example": "key_acme_1"})
    tenant_id = ma.fields.String(metadata={"example": "acme"})
    mode = ma.fields.String(metadata={"example": "test"})
    livemode = ma.fields.Boolean()
    scopes = ma.fields.List(ma.fields.String(), metadata={"example": ["appointments.read"]})
    expires_at = ma.fields.String(allow_none=True)
    created_at = ma.fields.String()

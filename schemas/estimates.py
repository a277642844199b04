"""Estimate bodies and filters; the estimate itself is schemas.records.EstimateSchema."""

import marshmallow as ma

from schemas.billing import BodyRecordId, ReasonSchema, currency, id_filter, line_items, require_a_field
from schemas.common import PaginationArgsSchema, Schema, list_schema
from schemas.records import EstimateSchema
from shop.models.billing import ESTIMATE_STATUSES


class EstimateQueryArgsSchema(PaginationArgsSchema):
    ticket_id = id_filter("invalid_ticket_id")
    status = ma.fields.String(
        validate=ma.validate.OneOf(ESTIMATE_STATUSES), metadata={"error_code": "invalid_status"}
    )


class EstimateCreateSchema(Schema):
    ticket_id = BodyRecordId(required=True)
    line_items = line_items(required=True)
    currency = currency(load_default="usd")


class EstimateUpdateSchema(Schema):
    OPENAPI = {"minProperties": 1}  # an empty body is 400 no_fields

    line_items = line_items()
    currency = currency()

    require_a_known_field = require_a_field("estimate")


class EstimateDeclineSchema(ReasonSchema):
    """POST /estimates/<id>/decline: the customer's reason, if any (at most 500 characters)."""


EstimateListSchema = list_schema(EstimateSchema, "EstimateListSchema")

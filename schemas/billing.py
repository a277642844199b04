"""Pieces the money resources share: record ids in bodies, amounts, currencies and line items."""

import marshmallow as ma

from schemas.common import INT32_MAX, QueryInt32, Schema
from shop.platform.errors import ApiError
from shop.platform.ids import ID_PATTERN

MAX_LINE_ITEMS = 100
MAX_QUANTITY = 10_000
MAX_UNIT_AMOUNT = 100_000_000  # one million in major units: far above any repair, and 10,000 x it fits int64
REASON_MAX = 500


class BodyRecordId(ma.fields.Field):
    """A record id in a body: its digit string ("3001"), as every body the service answers writes it,
    or the same positive integer; read as an int (1 to 2,147,483,647)."""

    OPENAPI = {
        "anyOf": [
            {"type": "string", "pattern": ID_PATTERN, "maxLength": 10},
            {"type": "integer", "minimum": 1, "maximum": INT32_MAX},
        ],
        "example": "1001",
    }

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 10:
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= INT32_MAX:
            raise ma.ValidationError(
                f"Must be a record id: a digit string or positive integer up to {INT32_MAX}."
            )
        return value


class Amount(ma.fields.Field):
    """A sum of money in the currency's minor unit (cents): a JSON integer, never a string or fraction."""

    def __init__(self, minimum: int = 0, maximum: int = INT32_MAX, **kwargs):
        self.minimum, self.maximum = minimum, maximum
        super().__init__(**kwargs)
        self.OPENAPI = {"type": "integer", "minimum": minimum, "maximum": maximum, "example": 4500}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ma.ValidationError("Must be a whole number of the currency's minor unit (cents).")
        if not self.minimum <= value <= self.maximum:
            raise ma.ValidationError(f"Must be between {self.minimum} and {self.maximum}.")
        return value


def currency(**kwargs) -> ma.fields.String:
    """A lower-case ISO 4217 code (usd, eur)."""
    return ma.fields.String(
        validate=ma.validate.Regexp(r"^[a-z]{3}\Z", error="Must be a lower-case ISO 4217 code such as usd."),
        metadata={"pattern": "^[a-z]{3}$", "example": "usd"},
        **kwargs,
    )


def text(max_length: int, minimum: int = 0, **kwargs) -> ma.fields.String:
    """A string of at most max_length characters."""
    return ma.fields.String(validate=ma.validate.Length(min=minimum, max=max_length), **kwargs)


class LineItemInputSchema(Schema):
    """A line item as a client writes it: its amount is computed (quantity x unit_amount), never sent."""

    description = text(500, minimum=1, required=True, metadata={"example": "Screen replacement"})
    quantity = Amount(minimum=1, maximum=MAX_QUANTITY, required=True)
    unit_amount = Amount(maximum=MAX_UNIT_AMOUNT, required=True)


class LineItemSchema(Schema):
    """A line item as the service answers it."""

    description = ma.fields.String(metadata={"example": "Screen replacement"})
    quantity = ma.fields.Integer(metadata={"example": 1})
    unit_amount = ma.fields.Integer(metadata={"example": 12000})
    amount = ma.fields.Integer(metadata={"example": 12000})


def line_items(**kwargs) -> ma.fields.List:
    """The line items of a create or update body: 1 to 100 of them."""
    return ma.fields.List(
        ma.fields.Nested(LineItemInputSchema),
        validate=ma.validate.Length(min=1, max=MAX_LINE_ITEMS),
        metadata={"description": "Each item's amount and the document's total are computed by the service."},
        **kwargs,
    )


class ReasonSchema(Schema):
    """A body with an optional reason (a decline, a void)."""

    reason = text(REASON_MAX, allow_none=True, load_default=None, metadata={"example": "Too expensive"})


def id_filter(code: str) -> QueryInt32:
    """A query filter naming a record by its id."""
    return QueryInt32(metadata={"error_code": code})


def require_a_field(kind: str):
    """A pre_load hook: an update body naming no field of the schema is 400 no_fields."""

    @ma.pre_load
    def require_a_known_field(self, data, **kwargs):
        if isinstance(data, dict) and not any(key in self.fields for key in data):
            raise ApiError(400, "no_fields", f"Send at least one {kind} field to change.")
        return data

    return require_a_known_field

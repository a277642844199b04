"""Schemas every resource shares: the error body, the list envelope, pagination, 32-bit ids."""

import datetime

import marshmallow as ma

from shop import clock

INT32_MAX = 2_147_483_647
CURSOR_MAX_LENGTH = 256
CURSOR_PATTERN = r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$"  # a newline before $ then fails the signature


class Schema(ma.Schema):
    """Base schema: unknown fields are an error, as in the fixture format."""

    class Meta:
        unknown = ma.RAISE
        ordered = True


class Int32(ma.fields.Integer):
    """A positive integer that fits a signed 32-bit column (JSON: numbers only, no booleans)."""

    OPENAPI = {"minimum": 1, "maximum": INT32_MAX}

    def __init__(self, **kwargs):
        kwargs.setdefault("strict", True)
        super().__init__(**kwargs)

    def _validated(self, value):
        if isinstance(value, bool):
            raise self.make_error("invalid")
        number = super()._validated(value)
        if number is not None and number > INT32_MAX:
            raise ma.ValidationError(f"Must be at most {INT32_MAX}.")
        if number is not None and number < 1:
            raise ma.ValidationError("Must be a positive integer.")
        return number


def plain_digits(value) -> bool:
    """True for a query value written as ASCII digits only: int() alone would also take
    "+1", " 1", "1_0" and non-ASCII digits such as "\uff12" (fullwidth 2)."""
    return isinstance(value, str) and value.isascii() and value.isdigit()


class QueryInteger(ma.fields.Integer):
    """A non-negative integer written as plain digits in a query string."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not plain_digits(value):
            raise self.make_error("invalid")
        return super()._deserialize(value, attr, data, **kwargs)


class QueryInt32(QueryInteger):
    """A positive 32-bit integer written as plain digits in a query string."""

    def __init__(self, **kwargs):
        kwargs.setdefault("validate", ma.validate.Range(min=1, max=INT32_MAX))
        super().__init__(**kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        if not plain_digits(value) or len(value) > 10 or not 1 <= int(value) <= INT32_MAX:
            raise ma.ValidationError(f"Must be a positive integer no larger than {INT32_MAX}.")
        return int(value)


class UtcDateTime(ma.fields.DateTime):
    """An ISO 8601 timestamp, loaded as the naive UTC datetime the store keeps (naive input is UTC)."""

    def _deserialize(self, value, attr, data, **kwargs):
        loaded = super()._deserialize(value, attr, data, **kwargs)
        if loaded.tzinfo is None:
            return loaded
        try:
            return loaded.astimezone(datetime.UTC).replace(tzinfo=None)
        except OverflowError:  # 0001-01-01T00:00+05:00 is before year 1 in UTC
            raise ma.ValidationError("Not a valid datetime: outside years 1 to 9999 in UTC.") from None


class Stamp(ma.fields.String):
    """An output timestamp: a stored UTC datetime written ISO 8601 with milliseconds and a Z."""

    def _serialize(self, value, attr, obj, **kwargs):
        if isinstance(value, datetime.datetime):
            return clock.isoformat(value)
        return super()._serialize(value, attr, obj, **kwargs)


class Count(ma.fields.Integer):
    """An output count a query annotates; a row read without the annotation counts 0."""

    def serialize(self, attr, obj, accessor=None, **kwargs):
        return self._serialize(self.get_value(obj, attr, accessor=accessor) or 0, attr, obj, **kwargs)


class QueryBool(ma.fields.Boolean):
    """A boolean query value: true/false/1/0 (any case) and nothing else, everywhere."""

    truthy = {"true", "1"}
    falsy = {"false", "0"}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str) and value.lower() in self.truthy | self.falsy:
            return value.lower() in self.truthy
        raise self.make_error("invalid")


class NoBodySchema(Schema):
    """For writes that take no fields: no body or `{}`; any field sent is refused, not ignored."""


class ErrorDetailSchema(Schema):
    type = ma.fields.String(metadata={"example": "invalid_request_error"})
    code = ma.fields.String(metadata={"example": "invalid_field"})
    message = ma.fields.String(metadata={"example": "url: Not a valid URL."})
    param = ma.fields.String(allow_none=True, metadata={"example": "url"})
    details = ma.fields.Dict(allow_none=True)
    request_id = ma.fields.String(metadata={"example": "req_5f2c0e5b9a1d4c7e8f0a1b2c"})


class ErrorSchema(Schema):
    """The error body of every non-2xx response."""

    error = ma.fields.Nested(ErrorDetailSchema)


class PaginationArgsSchema(Schema):
    """limit (1..100, default 25) and the opaque cursor."""

    class Meta:
        unknown = ma.EXCLUDE

    limit = QueryInteger(load_default=25, validate=ma.validate.Range(min=1, max=100))
    # a cursor is two base64url parts; the bound keeps a request line with every filter at its
    # longest under the server's limit (see shop/gunicorn_conf.py), far above any cursor issued
    cursor = ma.fields.String(
        load_default=None,
        validate=[ma.validate.Length(min=1, max=CURSOR_MAX_LENGTH), ma.validate.Regexp(CURSOR_PATTERN)],
        metadata={
            "error_code": "invalid_cursor",
            "array_code": "invalid_cursor",
            "description": "The next_cursor of the previous page, unchanged.",
        },
    )


def list_schema(item_schema, name: str):
    """A list envelope schema around one item schema (for the OpenAPI document)."""
    return type(
        name,
        (Schema,),
        {
            "object": ma.fields.Constant("list"),
            "data": ma.fields.List(ma.fields.Nested(item_schema)),
            "has_more": ma.fields.Boolean(),
            "next_cursor": ma.fields.String(allow_none=True),
        },
    )

"""The api_usage report (its query is parsed leniently in shop.domain.usage)."""

import marshmallow as ma

from schemas.common import Schema

# documented bound only: the service ignores a longer value like any malformed one
USAGE_PARAM_MAX_LENGTH = 64


class UsageWindowSchema(Schema):
    since = ma.fields.String(allow_none=True)
    until = ma.fields.String(allow_none=True)


class UsageByKeySchema(Schema):
    api_key_id = ma.fields.String()
    total_requests = ma.fields.Integer()
    error_count = ma.fields.Integer()
    error_rate = ma.fields.Float()
    avg_duration_ms = ma.fields.Integer()


class ApiUsageSchema(Schema):
    object = ma.fields.Constant("api_usage")
    tenant_id = ma.fields.String()
    window = ma.fields.Nested(UsageWindowSchema)
    total_requests = ma.fields.Integer()
    by_status_class = ma.fields.Dict(
        keys=ma.fields.String(),
        values=ma.fields.Integer(),
        metadata={"example": {"2xx": 9, "4xx": 1, "5xx": 0, "other": 0}},
    )
    error_count = ma.fields.Integer()
    error_rate = ma.fields.Float()
    duration_ms = ma.fields.Dict(
        keys=ma.fields.String(),
        values=ma.fields.Integer(),
        metadata={"example": {"total": 120, "avg": 12, "max": 40}},
    )
    distinct_keys = ma.fields.Integer()
    by_key = ma.fields.List(ma.fields.Nested(UsageByKeySchema))


def _lenient(description: str):
    # a free string in the document: the service ignores a malformed value of any length (the spec),
    # so no maxLength or pattern may call one invalid (issue 23, item 10)
    return ma.fields.String(
        metadata={
            "description": f"{description} A malformed value is ignored and the default applies.",
            "x-ignored-when-malformed": True,
        },
    )


class UsageQueryDocSchema(Schema):
    """Documented parameters; malformed values fall back to defaults instead of failing."""

    class Meta:
        unknown = ma.EXCLUDE

    # strings in the document: the service takes any value and ignores a malformed one, so the
    # document must not call "abc" invalid (the bound keeps the request line short)
    window_days = _lenient("Lookback in days, 1 to 36500 (default 30); ignored when since is set.")
    since = _lenient("Window start in epoch milliseconds, inclusive; overrides window_days.")
    until = _lenient("Window end in epoch milliseconds, exclusive (default now).")
    by_key = _lenient("`true` or `1` adds by_key (the calling key only).")
    limit = _lenient("Max by_key entries, 1 to 1000 (default 100).")

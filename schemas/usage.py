"""The api_usage report (its query is parsed leniently in shop.domain.usage)."""

import marshmallow as ma

from schemas.common import Schema


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
    by_status_class = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.Integer(),
                                     metadata={"example": {"2xx": 9, "4xx": 1, "5xx": 0, "other": 0}})
    error_count = ma.fields.Integer()
    error_rate = ma.fields.Float()
    duration_ms = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.Integer(),
                                 metadata={"example": {"total": 120, "avg": 12, "max": 40}})
    distinct_keys = ma.fields.Integer()
    by_key = ma.fields.List(ma.fields.Nested(UsageByKeySchema))


class UsageQueryDocSchema(Schema):
    """Documented parameters; malformed values fall back to defaults instead of failing."""

    class Meta:
        unknown = ma.EXCLUDE

    window_days = ma.fields.Integer(metadata={"description": "Lookback in days (default 30)"})
    since = ma.fields.Integer(metadata={"description": "Window start, epoch ms, inclusive"})
    until = ma.fields.Integer(metadata={"description": "Window end, epoch ms, exclusive"})
    by_key = ma.fields.Boolean(metadata={"description": "true or 1 adds by_key"})
    limit = ma.fields.Integer(metadata={"description": "Max by_key entries (default 100, max 1000)"})

"""Webhook subscriptions, deliveries and event types."""

import marshmallow as ma

from schemas.common import PaginationArgsSchema, Schema, Stamp, UtcDateTime, list_schema
from shop.models.events import EVENT_TYPES, WILDCARD
from shop.models.webhooks import (
    ATTEMPT_STATUSES,
    ATTEMPT_TRIGGERS,
    DELIVERY_STATUSES,
    MAX_URL_LENGTH,
    RECOVERY_STATUSES,
    STATS_WINDOWS,
    TERMINAL,
)

TIMESTAMP = {"example": "2026-11-01T10:00:00.000Z"}


class StrictBoolean(ma.fields.Boolean):
    """A JSON true or false, nothing else ("yes", 1 and "true" are mistakes, not booleans)."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool):
            return value
        raise self.make_error("invalid")


class EventTypes(ma.fields.Field):
    """A non-empty array of known event type names, or exactly ["*"]."""

    OPENAPI = {
        "anyOf": [
            {"type": "array", "minItems": 1, "items": {"type": "string", "enum": list(EVENT_TYPES)}},
            {"type": "array", "minItems": 1, "maxItems": 1, "items": {"type": "string", "enum": [WILDCARD]}},
        ]
    }

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, list) or not value:
            raise ma.ValidationError('Must be a non-empty array of event type names, or ["*"].')
        if not all(isinstance(item, str) for item in value):
            raise ma.ValidationError('Every element must be a string (an event type name or "*").')
        if WILDCARD in value and len(value) > 1:
            raise ma.ValidationError('"*" subscribes to every event and must be the only element.')
        unknown = [item for item in value if item != WILDCARD and item not in EVENT_TYPES]
        if unknown:
            raise ma.ValidationError(
                f"Unknown event type {unknown[0]!r}; see GET /api/v1/webhooks/event_types."
            )
        return list(dict.fromkeys(value))  # a repeated name subscribes once


def _url_field(**kwargs):
    # the shape only: the host must also be public (no private, loopback or metadata address)
    return ma.fields.String(
        metadata={
            "example": "https://hooks.example.com/repair-shop",
            "format": "uri",
            "pattern": "^https://",
            "maxLength": MAX_URL_LENGTH,
            "description": "A public HTTPS URL; private, loopback and cloud metadata addresses are refused.",
        },
        **kwargs,
    )


class WebhookCreateSchema(Schema):
    url = _url_field(required=True)
    events = EventTypes(required=True, metadata={"example": ["ticket.created", "invoice.paid"]})
    description = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=500))
    enabled = StrictBoolean(load_default=True)


class WebhookUpdateSchema(Schema):
    url = _url_field()
    events = EventTypes(metadata={"example": ["*"]})
    description = ma.fields.String(allow_none=True, validate=ma.validate.Length(max=500))
    enabled = StrictBoolean()


class WebhookSubscriptionSchema(Schema):
    object = ma.fields.Constant("webhook_subscription")
    id = ma.fields.String(metadata={"example": "whsub_5f2c0e5b9a1d4c7e8f0a1b2c"})
    url = _url_field()
    description = ma.fields.String(allow_none=True)
    enabled = ma.fields.Boolean()
    events = ma.fields.List(ma.fields.String())
    api_version = ma.fields.String(metadata={"example": "2026-11-01"})
    last_error = ma.fields.String(allow_none=True)
    disabled_at = Stamp(allow_none=True, metadata=TIMESTAMP)
    created_at = Stamp(metadata=TIMESTAMP)
    updated_at = Stamp(metadata=TIMESTAMP)


class WebhookWithSecretSchema(WebhookSubscriptionSchema):
    """The create response: the only time (with rotation) the signing secret is shown."""

    signing_secret = ma.fields.String(metadata={"example": "whsec_..."})


class WebhookRotatedSchema(WebhookWithSecretSchema):
    previous_signing_secret_expires_at = Stamp(
        attribute="previous_secret_expires_at", allow_none=True, metadata=TIMESTAMP
    )
    signing_secret_generation = ma.fields.Integer(attribute="secret_generation", metadata={"example": 2})


class WebhookDeletedSchema(Schema):
    object = ma.fields.Constant("webhook_subscription")
    id = ma.fields.String()
    deleted = ma.fields.Constant(True)


class WebhookDeliverySchema(Schema):
    object = ma.fields.Constant("webhook_delivery")
    id = ma.fields.String(metadata={"example": "whd_5f2c0e5b9a1d4c7e8f0a1b2c"})
    subscription_id = ma.fields.String()
    event_id = ma.fields.String(metadata={"example": "evt_5f2c0e5b9a1d4c7e8f0a1b2c"})
    event_type = ma.fields.String(metadata={"example": "webhook.ping"})
    status = ma.fields.String(metadata={"example": "pending"})
    attempts = ma.fields.Integer()
    last_status_code = ma.fields.Integer(allow_none=True)
    last_error = ma.fields.String(allow_none=True)
    response_ms = ma.fields.Integer(allow_none=True)
    next_attempt_at = Stamp(allow_none=True, metadata=TIMESTAMP)
    last_attempt_at = Stamp(allow_none=True, metadata=TIMESTAMP)
    delivered_at = Stamp(allow_none=True, metadata=TIMESTAMP)
    created_at = Stamp(metadata=TIMESTAMP)
    updated_at = Stamp(metadata=TIMESTAMP)


class WebhookEventTypeSchema(Schema):
    object = ma.fields.Constant("webhook_event_type")
    type = ma.fields.String(metadata={"example": "ticket.created"})
    description = ma.fields.String()
    data_object = ma.fields.String(allow_none=True, metadata={"example": "ticket"})


class WebhookQueryArgsSchema(PaginationArgsSchema):
    pass


class WebhookDeliveryQueryArgsSchema(PaginationArgsSchema):
    status = ma.fields.String(
        validate=ma.validate.OneOf(DELIVERY_STATUSES),
        metadata={"description": "Only deliveries in this status."},
    )


WebhookListSchema = list_schema(WebhookSubscriptionSchema, "WebhookListSchema")
WebhookEventTypeListSchema = list_schema(WebhookEventTypeSchema, "WebhookEventTypeListSchema")


class WebhookDeliveryCountsSchema(Schema):
    pending = ma.fields.Integer()
    retrying = ma.fields.Integer()
    delivered = ma.fields.Integer()
    failed = ma.fields.Integer()
    dead = ma.fields.Integer()


class WebhookDeliverySummarySchema(Schema):
    object = ma.fields.Constant("webhook_delivery_summary")
    subscription_id = ma.fields.String(metadata={"example": "whsub_3kTq9"})
    total = ma.fields.Integer()
    counts = ma.fields.Nested(WebhookDeliveryCountsSchema)
    pending = ma.fields.Integer(metadata={"description": "counts.pending + counts.retrying"})
    last_delivered_at = ma.fields.String(allow_none=True)
    last_attempt_at = ma.fields.String(allow_none=True)


WebhookDeliveryListSchema = list_schema(WebhookDeliverySchema, "WebhookDeliveryListSchema")


def _timestamp(**kwargs):
    return Stamp(metadata=TIMESTAMP, **kwargs)


class WebhookDeliveryAttemptSchema(Schema):
    object = ma.fields.Constant("webhook_delivery_attempt")
    id = ma.fields.String(metadata={"example": "whatt_5f2c0e5b9a1d4c7e8f0a1b2c"})
    delivery_id = ma.fields.String(metadata={"example": "whd_5f2c0e5b9a1d4c7e8f0a1b2c"})
    subscription_id = ma.fields.String()
    number = ma.fields.Integer(
        metadata={
            "description": "1 for the first attempt of a run; a redeliver or a recovery starts a new run at 1"
        }
    )
    trigger = ma.fields.String(metadata={"enum": list(ATTEMPT_TRIGGERS)})
    status = ma.fields.String(
        metadata={
            "enum": list(ATTEMPT_STATUSES),
            "description": "started until the outcome is written; "
            "interrupted when a stopped worker cut it off",
        }
    )
    started_at = _timestamp()
    finished_at = _timestamp(allow_none=True)
    duration_ms = ma.fields.Integer(allow_none=True)
    address = ma.fields.String(
        allow_none=True, metadata={"description": "the vetted IP address the attempt connected to"}
    )
    request_headers = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.String())
    response_status = ma.fields.Integer(allow_none=True)
    response_headers = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.String(), allow_none=True)
    response_body = ma.fields.String(allow_none=True, metadata={"description": "the first 2 KB, as text"})
    error = ma.fields.String(allow_none=True, metadata={"example": "timeout"})


WebhookDeliveryAttemptListSchema = list_schema(
    WebhookDeliveryAttemptSchema, "WebhookDeliveryAttemptListSchema"
)


class WebhookRecoverSchema(Schema):
    since = UtcDateTime(required=True, metadata=TIMESTAMP)
    until = UtcDateTime(metadata={**TIMESTAMP, "description": "exclusive; absent: now"})
    statuses = ma.fields.List(
        ma.fields.String(validate=ma.validate.OneOf(TERMINAL)),
        validate=ma.validate.Length(min=1, max=len(TERMINAL)),
        metadata={"description": "terminal statuses to re-queue (default dead and failed)"},
    )
    dry_run = StrictBoolean(load_default=False)


class WebhookRecoverySchema(Schema):
    object = ma.fields.Constant("webhook_recovery")
    id = ma.fields.String(metadata={"example": "whrec_5f2c0e5b9a1d4c7e8f0a1b2c"})
    subscription_id = ma.fields.String()
    since = _timestamp()
    until = _timestamp()
    statuses = ma.fields.List(ma.fields.String(metadata={"enum": list(TERMINAL)}))
    dry_run = ma.fields.Boolean()
    count = ma.fields.Integer(metadata={"description": "deliveries matched (re-queued unless dry_run)"})
    status = ma.fields.String(metadata={"enum": list(RECOVERY_STATUSES)})
    created_at = _timestamp()


class WebhookStatsArgsSchema(Schema):
    class Meta:
        unknown = ma.EXCLUDE

    window = ma.fields.String(load_default="24h", validate=ma.validate.OneOf(STATS_WINDOWS))


class WebhookEndpointStatsSchema(Schema):
    object = ma.fields.Constant("webhook_endpoint_stats")
    subscription_id = ma.fields.String()
    window = ma.fields.String(metadata={"enum": list(STATS_WINDOWS)})
    since = _timestamp()
    until = _timestamp()
    attempts = ma.fields.Integer()
    delivered = ma.fields.Integer(metadata={"description": "attempts answered with a 2xx"})
    failed = ma.fields.Integer(metadata={"description": "attempts that failed or were interrupted"})
    success_rate = ma.fields.Float(
        allow_none=True, metadata={"description": "delivered / finished attempts; null without any"}
    )
    p50_response_ms = ma.fields.Integer(allow_none=True)
    p95_response_ms = ma.fields.Integer(allow_none=True)
    last_success_at = _timestamp(allow_none=True)
    last_failure_at = _timestamp(allow_none=True)

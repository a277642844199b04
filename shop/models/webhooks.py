"""Webhook subscriptions and their deliveries (one per subscription and event)."""

from peewee import BooleanField, CharField, ForeignKeyField, IntegerField, TextField

from shop import clock
from shop.models.base import BaseModel, JSONField, UTCDateTimeField
from shop.models.events import Event
from shop.models.tenancy import Tenant

DELIVERY_STATUSES = ("pending", "retrying", "delivered", "failed", "dead")
IN_FLIGHT = ("pending", "retrying")
# version dates the service knows, oldest first; a subscription pins one (spec: Versioning)
API_VERSIONS = ("2026-11-01",)
# the longest destination URL a subscription may name
MAX_URL_LENGTH = 2048


class WebhookSubscription(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, backref="webhook_subscriptions", on_delete="CASCADE")
    url = TextField()
    events = JSONField()
    description = TextField(null=True)
    enabled = BooleanField(default=True)
    api_version = CharField(max_length=10)
    last_error = TextField(null=True)
    disabled_at = UTCDateTimeField(null=True)
    # signing secrets, encrypted with the instance secret key (shop.platform.secretbox)
    secret_encrypted = TextField(null=True)
    previous_secret_encrypted = TextField(null=True)
    previous_secret_expires_at = UTCDateTimeField(null=True)
    secret_generation = IntegerField(default=1)
    secret_rotated_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField(default=clock.now)
    updated_at = UTCDateTimeField(default=clock.now)
    # a deleted subscription is kept (its deliveries refer to it) but is gone from the API
    deleted_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = ((("tenant", "deleted_at", "created_at"), False),)


class WebhookDelivery(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, backref="webhook_deliveries", on_delete="CASCADE")
    subscription = ForeignKeyField(WebhookSubscription, backref="deliveries", on_delete="CASCADE")
    event = ForeignKeyField(Event, backref="deliveries", on_delete="CASCADE")
    event_type = CharField(max_length=64)
    payload = JSONField()  # the envelope as sent, so a redelivery repeats it byte for byte
    status = CharField(max_length=16, default="pending")
    attempts = IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    last_status_code = IntegerField(null=True)
    last_error = TextField(null=True)
    response_ms = IntegerField(null=True)
    response_excerpt = TextField(null=True)
    created_at = UTCDateTimeField(default=clock.now)
    updated_at = UTCDateTimeField(default=clock.now)
    last_attempt_at = UTCDateTimeField(null=True)
    delivered_at = UTCDateTimeField(null=True)
    # set while a worker is attempting it, so a sweep never starts a second attempt meanwhile
    claimed_until = UTCDateTimeField(null=True)

    class Meta:
        indexes = (
            (("subscription", "event"), True),  # an event is delivered once per subscription
            (("subscription", "created_at"), False),  # the deliveries list, newest first
            (("status", "next_attempt_at"), False),  # the sweep of due deliveries
        )

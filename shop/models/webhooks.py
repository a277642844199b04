"""Webhook subscriptions and their deliveries (one per subscription and event)."""

from peewee import BooleanField, CharField, DateField, ForeignKeyField, IntegerField, TextField

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
TERMINAL = ("delivered", "failed", "dead")
# what started an attempt: the event, the retry table, a redeliver, or a recovery
ATTEMPT_TRIGGERS = ("initial", "retry", "redeliver", "recover")
# an attempt is "started" until its outcome is written; one a killed worker cut off is "interrupted"
ATTEMPT_STATUSES = ("started", "succeeded", "failed", "interrupted")
RECOVERY_STATUSES = ("running", "completed")
STATS_WINDOWS = ("24h", "7d")


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
    # the UTC day of the last webhook_delivery_dead inbox notice: one a day per subscription
    dead_notice_on = DateField(null=True)

    class Meta:
        indexes = ((("tenant", "deleted_at", "created_at"), False),)


class WebhookDelivery(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, backref="webhook_deliveries", on_delete="CASCADE")
    # no index of its own: the column leads the two indexes below (migration 0008)
    subscription = ForeignKeyField(
        WebhookSubscription, backref="deliveries", on_delete="CASCADE", index=False
    )
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
    # what queued the current run of attempts (initial, redeliver or recover): its first attempt's trigger
    run_trigger = CharField(max_length=16, default="initial")

    class Meta:
        indexes = (
            (("subscription", "event"), True),  # an event is delivered once per subscription
            (("subscription", "created_at"), False),  # the deliveries list, newest first
            (("status", "next_attempt_at"), False),  # the sweep of due deliveries
        )


class WebhookDeliveryAttempt(BaseModel):
    """One attempt of a delivery, written as started before its request goes out."""

    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, backref="webhook_delivery_attempts", on_delete="CASCADE", index=False)
    delivery = ForeignKeyField(WebhookDelivery, backref="attempt_log", on_delete="CASCADE", index=False)
    subscription = ForeignKeyField(
        WebhookSubscription, backref="attempt_log", on_delete="CASCADE", index=False
    )
    number = IntegerField()
    trigger = CharField(max_length=16)
    status = CharField(max_length=16, default="started")
    started_at = UTCDateTimeField()
    finished_at = UTCDateTimeField(null=True)
    duration_ms = IntegerField(null=True)
    address = CharField(max_length=64, null=True)
    request_headers = JSONField()
    response_status = IntegerField(null=True)
    response_headers = JSONField(null=True)
    response_body = TextField(null=True)
    error = TextField(null=True)

    class Meta:
        indexes = (
            (("delivery", "started_at", "id"), False),  # a delivery's log, oldest first
            # stats over a window read only this index: status and duration ride along
            (("subscription", "started_at", "status", "duration_ms"), False),
        )


class WebhookRecovery(BaseModel):
    """A recover request: the window and statuses it re-queues, worked through in batches."""

    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, backref="webhook_recoveries", on_delete="CASCADE", index=False)
    subscription = ForeignKeyField(
        WebhookSubscription, backref="recoveries", on_delete="CASCADE", index=False
    )
    since = UTCDateTimeField()
    until = UTCDateTimeField()
    statuses = JSONField()
    dry_run = BooleanField(default=False)
    count = IntegerField(default=0)
    requeued = IntegerField(default=0)
    status = CharField(max_length=16, default="running")
    # 1 while running, NULL after: the unique index lets one recovery run per subscription at a time
    # (NULLs never collide, on SQLite and PostgreSQL alike)
    running = IntegerField(null=True)
    # the (created_at, id) of the last delivery re-queued: the next batch starts after it
    after_created_at = UTCDateTimeField(null=True)
    after_id = CharField(max_length=40, null=True)
    created_at = UTCDateTimeField(default=clock.now)
    finished_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = ((("subscription", "running"), True),)

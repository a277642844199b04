"""State the request pipeline keeps: rate-limit buckets, auth failures, idempotency, usage."""

from peewee import (
    AutoField,
    BigIntegerField,
    BooleanField,
    CharField,
    DoubleField,
    IntegerField,
    TextField,
)

from shop.models.base import BaseModel, UTCDateTimeField


class RateBucket(BaseModel):
    """One token bucket per API key, shared by every process that serves the database."""

    api_key_id = CharField(primary_key=True, max_length=64)
    tokens = DoubleField()  # REAL on SQLite; on PostgreSQL FloatField would be a 4-byte REAL
    updated_at = DoubleField()  # epoch seconds
    granted = BooleanField(default=True)  # whether the last take succeeded


class AuthFailure(BaseModel):
    """Failed authentications from one address in the current minute."""

    ip = CharField(primary_key=True, max_length=64)
    minute = BigIntegerField()
    count = IntegerField(default=0)

    class Meta:
        # the blocked-set query (every process, once a second) reads this minute's rows over the limit
        indexes = ((("minute", "count"), False),)


class IdempotencyRecord(BaseModel):
    id = AutoField()
    api_key_id = CharField(max_length=64)
    key = CharField(max_length=255)
    fingerprint = CharField(max_length=64)
    state = CharField(max_length=16, default="in_progress")  # or completed
    locked_until = UTCDateTimeField()
    status_code = IntegerField(null=True)
    body = TextField(null=True)
    content_type = CharField(max_length=100, null=True)
    request_id = CharField(max_length=40, null=True)  # of the request that ran; replays repeat it
    created_at = UTCDateTimeField(index=True)

    class Meta:
        indexes = ((("api_key_id", "key"), True),)


class UsageLog(BaseModel):
    id = AutoField()
    tenant_id = CharField(max_length=64)
    api_key_id = CharField(max_length=64)
    method = CharField(max_length=8)
    path = CharField(max_length=255)
    status = IntegerField()
    duration_ms = IntegerField()
    created_ms = BigIntegerField(index=True)  # the daily prune deletes by it (migration 0002)

    class Meta:
        indexes = ((("api_key_id", "created_ms"), False),)


class ConsumerHeartbeat(BaseModel):
    """One row per running consumer process, upserted every few seconds (shop.domain.heartbeat)."""

    id = CharField(primary_key=True, max_length=64)  # host:pid:random, unique per process run
    host = CharField(max_length=255)
    pid = IntegerField()
    periodic = BooleanField()  # whether it runs the periodic tasks (the sweeps)
    started_at = UTCDateTimeField()
    beat_at = UTCDateTimeField(index=True)  # health reads the newest

"""Tenants (shops), their teammates and their API keys."""

from peewee import (
    AutoField,
    BooleanField,
    CharField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from shop import clock
from shop.models.base import BaseModel, JSONField, UTCDateTimeField

PLANS = ("starter", "pro", "enterprise")
PLANS_WITH_API = ("pro", "enterprise")
ROLES = ("owner", "staff")
BILLING_STATUSES = ("active", "trialing", "past_due", "incomplete", "canceled", "unpaid")


class Tenant(BaseModel):
    id = CharField(primary_key=True, max_length=64)
    name = CharField(max_length=255)
    timezone = CharField(max_length=64, default="UTC")
    plan = CharField(max_length=32, default="pro")
    billing_status = CharField(max_length=32, default="active")
    current_period_end = UTCDateTimeField(null=True)
    suspended = BooleanField(default=False)
    send_rate_per_minute = IntegerField(null=True)
    booking = JSONField(null=True)
    # the ticket statuses the API accepts, in board order; null: DEFAULT_TICKET_STATUSES
    ticket_statuses = JSONField(null=True)
    inbound_email = CharField(max_length=320, null=True, unique=True)  # lower-case
    help_text = TextField(null=True)
    created_at = UTCDateTimeField(default=clock.now)


class TenantSmsNumber(BaseModel):
    """A number (E.164) that reaches the tenant; position 0 is the `from` of its SMS."""

    number = CharField(primary_key=True, max_length=16)
    tenant = ForeignKeyField(Tenant, backref="sms_numbers", on_delete="CASCADE")
    position = IntegerField(default=0)


class User(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="users", on_delete="CASCADE")
    email = CharField(max_length=320)
    name = CharField(max_length=255, null=True)
    created_at = UTCDateTimeField(default=clock.now)
    # sign-in to the console (issue 27): a memory-hard hash (werkzeug's scrypt), never the password
    password_hash = CharField(max_length=255, null=True)
    role = CharField(max_length=8, default="staff")  # owner or staff (ROLES)
    disabled = BooleanField(default=False)
    # failed sign-ins in the current window, for the per-account limit (shop.domain.teammates)
    failed_sign_ins = IntegerField(default=0)
    failed_sign_in_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = ((("tenant", "email"), True),)


class ApiKey(BaseModel):
    id = CharField(primary_key=True, max_length=64)
    tenant = ForeignKeyField(Tenant, backref="api_keys", on_delete="CASCADE")
    token_hash = CharField(max_length=64, unique=True)
    token_prefix = CharField(max_length=16)
    mode = CharField(max_length=8, default="test")
    scopes = JSONField(default=list)
    revoked = BooleanField(default=False)
    expires_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField(default=clock.now)

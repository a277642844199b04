"""Calendar feeds: secret-token iCalendar subscriptions of a shop's (or one tech's) appointments."""

from peewee import BooleanField, CharField, ForeignKeyField

from shop import clock
from shop.models.base import BaseModel, UTCDateTimeField
from shop.models.tenancy import Tenant

CALENDAR_FEED_ID_PATTERN = r"^calfeed_[0-9a-f]{24}$"


class CalendarFeed(BaseModel):
    """One feed URL; only the SHA-256 of its token is kept, so the URL is shown once, at creation."""

    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, backref="calendar_feeds", on_delete="CASCADE")
    token_hash = CharField(max_length=64, unique=True)
    tech_id = CharField(max_length=40, null=True)
    hide_customer_names = BooleanField(default=False)
    description = CharField(max_length=255, null=True)
    # who made and who revoked it (the actor's name: a key id or a teammate's email); internal
    created_by = CharField(max_length=320, null=True)
    created_at = UTCDateTimeField(default=clock.now)
    last_fetched_at = UTCDateTimeField(null=True)
    revoked_at = UTCDateTimeField(null=True)
    revoked_by = CharField(max_length=320, null=True)

    class Meta:
        table_name = "calendar_feed"
        # the list: a tenant's live feeds, newest first
        indexes = ((("tenant", "revoked_at", "created_at"), False),)

"""The in-app notification inbox: global rows for the whole shop, user rows for one teammate."""

from peewee import AutoField, BooleanField, CharField, ForeignKeyField, TextField

from shop import clock
from shop.models.base import BaseModel, JSONField, UTCDateTimeField
from shop.models.records import Ticket
from shop.models.tenancy import Tenant, User

SCOPES = ("global", "user")


class Notification(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="notifications", on_delete="CASCADE", index=False)
    scope = CharField(max_length=8, default="global")
    # null for global rows; the teammate of a user row
    user = ForeignKeyField(User, null=True, backref="notifications", on_delete="CASCADE", index=False)
    ticket = ForeignKeyField(Ticket, null=True, backref="notifications", on_delete="CASCADE")
    type = CharField(max_length=64, null=True)
    message = TextField(null=True)
    from_email = CharField(max_length=320, null=True)
    read = BooleanField(default=False)
    archived = BooleanField(default=False)
    archived_at = UTCDateTimeField(null=True)
    details = JSONField(null=True)
    created_at = UTCDateTimeField(default=clock.now)

    class Meta:
        # the inbox is always read as one tenant's one scope (and teammate), active or archived, newest
        # first: the first index serves the plain list, the second the unread list and the unread
        # count (ticket_id last so the count reads only the index; the ticket check is a key lookup)
        indexes = (
            (("tenant", "scope", "user", "archived", "created_at", "id"), False),
            (("tenant", "scope", "user", "archived", "read", "created_at", "id", "ticket"), False),
        )

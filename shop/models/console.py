"""The browser console's sign-in sessions (the cookie names one; the API key's token is never kept)."""

from peewee import CharField, ForeignKeyField

from shop.models.base import BaseModel, UTCDateTimeField
from shop.models.tenancy import ApiKey, Tenant, User


class ConsoleSession(BaseModel):
    """A signed-in browser: the key or the teammate it acts as, its CSRF token and when it was last
    used (exactly one of api_key and user is set)."""

    id = CharField(primary_key=True, max_length=64)  # SHA-256 of the cookie's value, never the value
    tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
    api_key = ForeignKeyField(ApiKey, on_delete="CASCADE", null=True)
    user = ForeignKeyField(User, on_delete="CASCADE", null=True)  # a teammate's session (issue 27)
    csrf_token = CharField(max_length=64)
    created_at = UTCDateTimeField()
    last_seen_at = UTCDateTimeField(index=True)  # the idle expiry and the sweep read it

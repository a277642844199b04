"""The events outbox: every emitted event, written in the transaction of the change."""

from peewee import CharField, ForeignKeyField

from shop import clock
from shop.models.base import BaseModel, JSONField, UTCDateTimeField
from shop.models.tenancy import Tenant


class Event(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, backref="events", on_delete="CASCADE")
    type = CharField(max_length=64, index=True)
    api_version = CharField(max_length=8, default="v1")
    data = JSONField()
    created = UTCDateTimeField(default=clock.now, index=True)

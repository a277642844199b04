"""Leads: prospective customers captured by the shop, until converted to a repair ticket."""

from peewee import AutoField, CharField, ForeignKeyField

from shop import clock
from shop.models.base import BaseModel, UTCDateTimeField
from shop.models.records import Customer, Ticket
from shop.models.tenancy import Tenant

LEAD_STATUSES = ("new", "contacted", "qualified", "lost", "converted")


class Lead(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="leads", on_delete="CASCADE")
    name = CharField(max_length=255, null=True)
    email = CharField(max_length=320, null=True)
    phone = CharField(max_length=50, null=True)
    source = CharField(max_length=64, null=True)
    status = CharField(max_length=16, default="new")
    customer = ForeignKeyField(Customer, null=True, backref="leads", on_delete="SET NULL")
    converted_ticket = ForeignKeyField(Ticket, null=True, backref="leads", on_delete="SET NULL")
    converted_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField(default=clock.now)
    updated_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = ((("tenant", "created_at", "id"), False),)

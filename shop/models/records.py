"""Customer and ticket records of a shop, as far as the public API and events need them."""

from peewee import AutoField, BooleanField, CharField, ForeignKeyField

from shop import clock
from shop.models.base import BaseModel, UTCDateTimeField
from shop.models.tenancy import Tenant


class Customer(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="customers", on_delete="CASCADE")
    display_name = CharField(max_length=255, null=True)
    email = CharField(max_length=320, null=True)
    phone = CharField(max_length=50, null=True)
    sms_consent = BooleanField(default=False)
    created_at = UTCDateTimeField(default=clock.now, index=True)
    updated_at = UTCDateTimeField(null=True)


class Ticket(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="tickets", on_delete="CASCADE")
    customer = ForeignKeyField(Customer, null=True, backref="tickets", on_delete="SET NULL")
    subject = CharField(max_length=255, null=True)
    status = CharField(max_length=64, default="New")
    hidden = BooleanField(default=False)
    deleted = BooleanField(default=False)
    billing_only = BooleanField(default=False)
    created_at = UTCDateTimeField(default=clock.now)
    updated_at = UTCDateTimeField(null=True)

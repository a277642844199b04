"""Customer and ticket records of a shop, as far as the public API and events need them."""

from peewee import SQL, AutoField, BooleanField, CharField, ForeignKeyField, IntegerField, TextField, fn

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
    source = CharField(max_length=64, null=True)  # where the customer came from (walk_in, referral, ...)
    created_at = UTCDateTimeField(default=clock.now, index=True)
    updated_at = UTCDateTimeField(null=True)

    class Meta:
        # the customer an inbound SMS comes from and the customers a STOP or START applies to, by the
        # shop and the number; with the email index below, a reminder's customer (migration
        # customer_address_indexes)
        indexes = ((("tenant", "phone"), False),)


# the customer an inbound email comes from, and a reminder's customer, by the shop and the address
# as typed in any case (LOWER(email) in their statements)
EMAIL_INDEX = "customer_tenant_id_lower_email"
Customer.add_index(Customer.index(Customer.tenant, fn.LOWER(Customer.email), name=EMAIL_INDEX))


DEFAULT_TICKET_STATUSES = ("New", "In Progress", "Waiting for Parts", "Ready", "Resolved")
TICKET_PRIORITIES = ("low", "normal", "high", "urgent")


class Ticket(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="tickets", on_delete="CASCADE")
    customer = ForeignKeyField(Customer, null=True, backref="tickets", on_delete="SET NULL")
    subject = CharField(max_length=255, null=True)
    description = TextField(null=True)
    status = CharField(max_length=64, default="New")
    device = CharField(max_length=255, null=True)
    serial_number = CharField(max_length=255, null=True)
    # a teammate (User) of the tenant, as on conversations: an integer, no foreign key
    assigned_user_id = IntegerField(null=True)
    priority = CharField(max_length=16, default="normal", constraints=[SQL("DEFAULT 'normal'")])
    due_at = UTCDateTimeField(null=True)
    hidden = BooleanField(default=False)
    deleted = BooleanField(default=False)
    billing_only = BooleanField(default=False)
    created_at = UTCDateTimeField(default=clock.now)
    updated_at = UTCDateTimeField(null=True)

    class Meta:
        # the list, newest first, with or without a status filter (migration records_api)
        indexes = (
            (("tenant", "created_at", "id"), False),
            (("tenant", "status", "created_at", "id"), False),
        )

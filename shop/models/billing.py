"""Invoices, estimates, payments and refunds of a shop, as far as events need them.

Amounts are integers in the currency's minor unit (cents). What an invoice or payment has been
paid or refunded is summed from its payments and refunds, never stored twice.
"""

from peewee import AutoField, CharField, ForeignKeyField, IntegerField, TextField

from shop import clock
from shop.models.base import BaseModel, JSONField, UTCDateTimeField
from shop.models.records import Customer, Ticket
from shop.models.tenancy import Tenant

INVOICE_STATUSES = ("draft", "sent", "paid", "void")
ESTIMATE_STATUSES = ("draft", "sent", "approved", "declined")
PAYMENT_METHODS = ("cash", "card", "check", "bank_transfer", "other")


class Invoice(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="invoices", on_delete="CASCADE")
    customer = ForeignKeyField(Customer, null=True, backref="invoices", on_delete="SET NULL")
    ticket = ForeignKeyField(Ticket, null=True, backref="invoices", on_delete="SET NULL")
    number = CharField(max_length=64, null=True)
    status = CharField(max_length=16, default="draft")
    currency = CharField(max_length=3, default="usd")
    total = IntegerField(default=0)
    # [{"description", "quantity", "unit_amount", "amount"}]; total is their sum when they are given
    line_items = JSONField(default=list)
    sent_at = UTCDateTimeField(null=True)
    paid_at = UTCDateTimeField(null=True)
    voided_at = UTCDateTimeField(null=True)
    void_reason = CharField(max_length=500, null=True)
    # SHA-256 of the customer's portal link token (made when sent; the token is only in the email)
    portal_token_hash = CharField(max_length=64, null=True, unique=True)
    created_at = UTCDateTimeField(default=clock.now)
    updated_at = UTCDateTimeField(null=True)


class Estimate(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="estimates", on_delete="CASCADE")
    ticket = ForeignKeyField(Ticket, backref="estimates", on_delete="CASCADE")
    customer = ForeignKeyField(Customer, null=True, backref="estimates", on_delete="SET NULL")
    number = CharField(max_length=64, null=True)
    status = CharField(max_length=16, default="draft")
    currency = CharField(max_length=3, default="usd")
    total = IntegerField(default=0)
    line_items = JSONField(default=list)
    sent_at = UTCDateTimeField(null=True)
    approved_at = UTCDateTimeField(null=True)
    approved_by = CharField(max_length=320, null=True)
    declined_at = UTCDateTimeField(null=True)
    declined_by = CharField(max_length=320, null=True)
    decline_reason = CharField(max_length=500, null=True)
    # evidence of the customer's decision, kept for the shop and never put in an event
    decision_signature = TextField(null=True)
    decision_ip_address = CharField(max_length=64, null=True)
    decision_user_agent = CharField(max_length=1000, null=True)
    decision_name = CharField(max_length=255, null=True)  # the name the customer typed in the portal
    portal_token_hash = CharField(max_length=64, null=True, unique=True)
    created_at = UTCDateTimeField(default=clock.now)
    updated_at = UTCDateTimeField(null=True)


class Payment(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="payments", on_delete="CASCADE")
    invoice = ForeignKeyField(Invoice, backref="payments", on_delete="CASCADE")
    amount = IntegerField()
    method = CharField(max_length=32, default="other")
    created_at = UTCDateTimeField(default=clock.now)


class Refund(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="refunds", on_delete="CASCADE")
    payment = ForeignKeyField(Payment, backref="refunds", on_delete="CASCADE")
    amount = IntegerField()
    reason = CharField(max_length=500, null=True)
    created_at = UTCDateTimeField(default=clock.now)

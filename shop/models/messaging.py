"""Conversations (one thread per customer), their messages, and the suppression list."""

from peewee import SQL, AutoField, BooleanField, CharField, ForeignKeyField, IntegerField, TextField

from shop import clock
from shop.models.base import BaseModel, JSONField, UTCDateTimeField
from shop.models.records import Customer
from shop.models.tenancy import Tenant

CHANNELS = ("sms", "email", "portal", "voice")
DIRECTIONS = ("inbound", "outbound")
# outbound delivery: queued → sending → sent (or logged: the log provider) → delivered, or
# undelivered / failed; None for inbound messages (shop.domain.messaging.receipts moves it forward)
DELIVERY_STATUSES = ("queued", "sending", "logged", "sent", "delivered", "undelivered", "failed")
SUPPRESSION_REASONS = ("stop_keyword", "provider_opt_out", "bounce", "manual", "fixture")


class Conversation(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="conversations", on_delete="CASCADE")
    customer = ForeignKeyField(Customer, null=True, backref="conversations", on_delete="SET NULL")
    customer_email = CharField(max_length=320, null=True)
    customer_name = CharField(max_length=255, null=True)
    last_inbound_at = UTCDateTimeField(null=True)
    last_outbound_at = UTCDateTimeField(null=True)
    assigned_user_id = IntegerField(null=True)
    created_at = UTCDateTimeField(default=clock.now)
    updated_at = UTCDateTimeField(default=clock.now)

    class Meta:
        indexes = ((("tenant", "updated_at", "id"), False), (("tenant", "customer"), False))


class Message(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="messages", on_delete="CASCADE")
    conversation = ForeignKeyField(Conversation, backref="messages", on_delete="CASCADE")
    channel = CharField(max_length=8)
    direction = CharField(max_length=8)
    body = TextField(null=True)
    subject = CharField(max_length=998, null=True)
    sender = CharField(max_length=320, null=True)
    recipient = CharField(max_length=320, null=True)
    sent_from_ticket_id = CharField(max_length=32, null=True)
    external_uuid = CharField(max_length=255, null=True)
    in_reply_to = CharField(max_length=998, null=True)
    message_id_header = CharField(max_length=998, null=True)  # our or the sender's Message-ID
    media_urls = JSONField(null=True)
    attachments = JSONField(null=True)
    read = BooleanField(default=False)
    created_at = UTCDateTimeField(default=clock.now)
    delivery_status = CharField(max_length=16, null=True)
    delivery_attempts = IntegerField(default=0)
    delivery_error = TextField(null=True)
    next_attempt_at = UTCDateTimeField(null=True)
    claimed_until = UTCDateTimeField(null=True)
    # sent by the shop itself (a reminder, a confirmation): outside the tenant's API send rate
    automated = BooleanField(default=False, constraints=[SQL("DEFAULT FALSE")])
    # an inbound message's provider id (`sms:<provider id>`, `email:<Message-ID>`): a retry is a duplicate
    inbound_key = CharField(max_length=255, null=True)
    full_body = TextField(null=True)  # an inbound email's whole text when `body` is its reply alone

    class Meta:
        indexes = (
            (("tenant", "inbound_key"), True),
            # a delivery receipt finds its message by the provider's id
            (("external_uuid",), False),
            (("conversation", "created_at", "id"), False),
            (("conversation", "direction", "read"), False),
            # the inbound email a send answers (In-Reply-To) without reading the whole conversation
            (("conversation", "direction", "channel", "created_at", "id"), False),
            # covers the send-rate count (shop.domain.messaging.sending): no table reads per recent send
            (("tenant", "direction", "automated", "created_at"), False),
            (("delivery_status", "next_attempt_at"), False),
        )


class Suppression(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="suppressions", on_delete="CASCADE")
    channel = CharField(max_length=8)
    address = CharField(max_length=320)  # normalised: lower-case email, or phone digits with +
    reason = CharField(max_length=32, default="manual", constraints=[SQL("DEFAULT 'manual'")])
    created_at = UTCDateTimeField(default=clock.now)

    class Meta:
        indexes = ((("tenant", "channel", "address"), True),)

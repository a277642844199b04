"""Appointments: dates and times are the shop's local wall clock, timestamps are UTC."""

from peewee import SQL, AutoField, CharField, DateField, ForeignKeyField, IntegerField, TextField

from shop import clock
from shop.models.base import BaseModel, JSONField, UTCDateTimeField
from shop.models.tenancy import Tenant

STATUSES = ("scheduled", "pending", "confirmed", "checked_in", "completed", "no_show", "cancelled")
TERMINAL_STATUSES = ("completed", "no_show", "cancelled")
# a slot hold: active until released, consumed by a booking, or past expires_at (no job ends it)
HOLD_STATUSES = ("active", "released", "consumed")
HOLD_ID_PATTERN = r"^hold_[0-9a-f]{24}$"
HOLD_MINUTES_DEFAULT, HOLD_MINUTES_MAX = 10, 60
# at most a working day on either side of a job
MAX_BUFFER_MINUTES = 720


class Appointment(BaseModel):
    id = AutoField()
    tenant = ForeignKeyField(Tenant, backref="appointments", on_delete="CASCADE")
    customer_name = CharField(max_length=255)
    customer_phone = CharField(max_length=50)
    customer_email = CharField(max_length=320, null=True)
    # the email lowercased, so the case-insensitive filter is an indexed equality
    email_key = CharField(max_length=320, null=True)
    service_description = TextField(null=True)
    scheduled_date = DateField()
    scheduled_time = CharField(max_length=5)  # HH:MM, so text order is time order
    duration_minutes = IntegerField(default=30)
    status = CharField(max_length=16, default="scheduled")
    ticket_id = CharField(max_length=255, null=True)
    tech_id = CharField(max_length=40, null=True)
    location_id = IntegerField(null=True)
    notes = TextField(null=True)
    source = CharField(max_length=32, null=True)
    cancelled_at = UTCDateTimeField(null=True)
    cancellation_reason = TextField(null=True)
    created_at = UTCDateTimeField(default=clock.now)
    updated_at = UTCDateTimeField(null=True)
    # the booking settings' service it was booked as, and that service's buffers when it was booked:
    # internal (not in the resource), they keep other bookings away from the job
    service_id = CharField(max_length=40, null=True)
    buffer_before_minutes = IntegerField(default=0, constraints=[SQL("DEFAULT 0")])
    buffer_after_minutes = IntegerField(default=0, constraints=[SQL("DEFAULT 0")])
    # the calendar feeds' SEQUENCE: raised on every change of date, time, duration or status
    sequence = IntegerField(default=0, constraints=[SQL("DEFAULT 0")])

    class Meta:
        # the list order (keyset pages) and the slot computation's one-day lookup; the two
        # selective filters get the same order behind their column, so a rare ticket or email is
        # read straight from its index in page order instead of scanning the tenant's appointments
        indexes = (
            (("tenant", "scheduled_date", "scheduled_time", "id"), False),
            (("tenant", "ticket_id", "scheduled_date", "scheduled_time", "id"), False),
            (("tenant", "email_key", "scheduled_date", "scheduled_time", "id"), False),
        )

    def save(self, *args, **kwargs):
        self.fill_keys()
        return super().save(*args, **kwargs)

    def fill_keys(self) -> None:
        """The columns derived from the row's own values (every write sets them)."""
        self.email_key = self.customer_email.lower() if self.customer_email else None


class SlotHold(BaseModel):
    """A place taken for a few minutes while a customer finishes checkout; never an appointment."""

    id = CharField(primary_key=True, max_length=40)
    tenant = ForeignKeyField(Tenant, backref="slot_holds", on_delete="CASCADE")
    scheduled_date = DateField()
    scheduled_time = CharField(max_length=5)
    duration_minutes = IntegerField()
    service_id = CharField(max_length=40, null=True)
    tech_id = CharField(max_length=40, null=True)
    buffer_before_minutes = IntegerField(default=0, constraints=[SQL("DEFAULT 0")])
    buffer_after_minutes = IntegerField(default=0, constraints=[SQL("DEFAULT 0")])
    status = CharField(max_length=16, default="active")
    expires_at = UTCDateTimeField()
    created_at = UTCDateTimeField(default=clock.now)
    released_at = UTCDateTimeField(null=True)
    appointment_id = IntegerField(null=True)

    @property
    def state(self) -> str:
        """active, expired, released or consumed: an active hold past its expiry is expired."""
        if self.status == "active" and self.expires_at <= clock.now():
            return "expired"
        return self.status

    class Meta:
        table_name = "slot_hold"
        # the slot computation reads one day's live holds of a tenant
        indexes = ((("tenant", "scheduled_date", "status"), False),)


# an appointment's reminders and customer messages (issue 25): one row per rule or message
MAX_REMINDER_RULES, REMINDER_MIN_MINUTES, REMINDER_MAX_MINUTES = 5, 5, 20_160
TEMPLATE_PLACEHOLDERS = ("shop", "customer_name", "first_name", "date", "time", "service", "tech")
TEMPLATE_MAX_LENGTH = 1_000
REMINDER_KINDS = ("reminder", "confirmation", "reschedule", "cancellation")
REMINDER_STATUSES = ("pending", "sent", "skipped", "cancelled", "failed")
REMINDER_REASONS = (
    "too_late",
    "no_channel",
    "rescheduled",
    "appointment_cancelled",
    "appointment_completed",
    "appointment_no_show",
    "provider_failed",
    "settings_changed",  # the shop changed its reminder rules or quiet hours (console settings)
)


class AppointmentReminder(BaseModel):
    """A reminder due at `scheduled_for` (UTC), or a customer message queued then; `sent` means
    handed to the send pipeline (the message row carries its own delivery status)."""

    id = CharField(primary_key=True, max_length=40)  # rem_ + 24 hex
    tenant = ForeignKeyField(Tenant, backref="appointment_reminders", on_delete="CASCADE", index=False)
    appointment = ForeignKeyField(Appointment, backref="reminders", on_delete="CASCADE", index=False)
    kind = CharField(max_length=16)
    before_minutes = IntegerField(null=True)
    channels = JSONField(null=True)  # the rule's channels in order of preference (reminders)
    # the appointment's start instant (UTC) the row was planned for: the claim re-checks it
    starts_at = UTCDateTimeField()
    scheduled_for = UTCDateTimeField()
    status = CharField(max_length=16, default="pending")
    reason = CharField(max_length=32, null=True)
    channel = CharField(max_length=8, null=True)
    message_id = IntegerField(null=True)
    created_at = UTCDateTimeField(default=clock.now)
    updated_at = UTCDateTimeField(default=clock.now)

    class Meta:
        table_name = "appointment_reminder"
        indexes = (
            # the sweep reads the due pending ones as one index range (status, then time; the id in
            # it too, so no table row is read): sent, cancelled and future rows are never read
            (("status", "scheduled_for", "id"), False),
            # an appointment's rows in list order; the lifecycle's cancels read the same range
            (("appointment", "scheduled_for", "id"), False),
        )

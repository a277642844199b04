"""The fixture file format of DESIGN.md: unknown keys are errors, ids are kept."""

import re
import string
import zoneinfo

import marshmallow as ma

from schemas.activity import Amount, RecordId, StrictBool
from schemas.common import Schema, UtcDateTime
from schemas.notifications import NotificationFixture
from schemas.webhooks import EventTypes
from shop.models.appointments import (
    HOLD_MINUTES_DEFAULT,
    HOLD_MINUTES_MAX,
    MAX_BUFFER_MINUTES,
    MAX_REMINDER_RULES,
    REMINDER_MAX_MINUTES,
    REMINDER_MIN_MINUTES,
    STATUSES,
    TEMPLATE_MAX_LENGTH,
    TEMPLATE_PLACEHOLDERS,
)
from shop.models.billing import ESTIMATE_STATUSES, INVOICE_STATUSES, PAYMENT_METHODS
from shop.models.leads import LEAD_STATUSES
from shop.models.messaging import SUPPRESSION_REASONS
from shop.models.records import TICKET_PRIORITIES
from shop.models.tenancy import BILLING_STATUSES, PLANS
from shop.models.webhooks import API_VERSIONS

Str = ma.fields.String
Bool = ma.fields.Boolean
AwareDateTime = UtcDateTime  # ISO 8601, loaded as naive UTC
E164 = r"^\+[1-9][0-9]{7,14}$"


def _timezone(value: str) -> None:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ma.ValidationError(f"Unknown timezone {value!r}.") from None


def _distinct(values: list) -> None:
    if len(set(values)) != len(values):
        raise ma.ValidationError("Each status is named once.")


class UserFixture(Schema):
    id = ma.fields.Integer(strict=True)
    email = Str(required=True, validate=ma.validate.Email())
    name = Str(allow_none=True)
    # plain in the file, stored hashed (shop.domain.teammates); none: the teammate cannot sign in yet
    password = Str(allow_none=True, validate=ma.validate.Length(min=12, max=200))
    role = Str(load_default="staff", validate=ma.validate.OneOf(("owner", "staff")))
    disabled = Bool(load_default=False)


class ApiKeyFixture(Schema):
    id = Str(validate=ma.validate.Length(min=1, max=64))
    token = Str(validate=ma.validate.Length(min=8, max=200))
    mode = Str(load_default="test", validate=ma.validate.OneOf(("live", "test")))
    scopes = ma.fields.List(Str(), load_default=list)
    revoked = Bool(load_default=False)
    expires_at = AwareDateTime(allow_none=True, load_default=None)


class CustomerFixture(Schema):
    id = ma.fields.Integer(strict=True)
    display_name = Str(allow_none=True)
    email = Str(allow_none=True)
    phone = Str(allow_none=True)
    sms_consent = Bool(load_default=False)
    source = Str(allow_none=True, validate=ma.validate.Length(max=64))
    created_at = AwareDateTime()


class TicketFixture(Schema):
    id = Str(validate=ma.validate.Regexp(r"^[1-9][0-9]{0,9}$", error="Ticket ids are digit strings."))
    customer_id = ma.fields.Integer(strict=True, allow_none=True)
    subject = Str(allow_none=True)
    status = Str(load_default="New")
    description = Str(allow_none=True)
    device = Str(allow_none=True, validate=ma.validate.Length(max=255))
    serial_number = Str(allow_none=True, validate=ma.validate.Length(max=255))
    assigned_user_id = ma.fields.Integer(strict=True, allow_none=True)
    priority = Str(validate=ma.validate.OneOf(TICKET_PRIORITIES))
    due_at = AwareDateTime(allow_none=True)
    hidden = Bool(load_default=False)
    deleted = Bool(load_default=False)
    billing_only = Bool(load_default=False)
    created_at = AwareDateTime()


class MessageFixture(Schema):
    id = ma.fields.Integer(strict=True)
    channel = Str(required=True, validate=ma.validate.OneOf(("sms", "email", "portal", "voice")))
    direction = Str(required=True, validate=ma.validate.OneOf(("inbound", "outbound")))
    body = Str(allow_none=True)
    subject = Str(allow_none=True)
    sender = Str(allow_none=True)
    sent_from_ticket_id = Str(allow_none=True)
    external_uuid = Str(allow_none=True)
    in_reply_to = Str(allow_none=True)
    message_id = Str(allow_none=True)  # the email's own Message-ID header, for replies to it
    media_urls = ma.fields.List(Str(), allow_none=True)
    attachments = ma.fields.List(ma.fields.Dict(), allow_none=True)
    read = Bool(load_default=False)
    created_at = AwareDateTime()


class ConversationFixture(Schema):
    id = ma.fields.Integer(strict=True)
    customer_id = ma.fields.Integer(strict=True, allow_none=True)
    customer_email = Str(allow_none=True)
    customer_name = Str(allow_none=True)
    assigned_user_id = ma.fields.Integer(strict=True, allow_none=True)
    created_at = AwareDateTime()
    messages = ma.fields.List(ma.fields.Nested(MessageFixture), load_default=list)


class SuppressionFixture(Schema):
    channel = Str(required=True, validate=ma.validate.OneOf(("sms", "email")))
    address = Str(required=True, validate=ma.validate.Length(min=1, max=320))
    reason = Str(load_default="fixture", validate=ma.validate.OneOf(SUPPRESSION_REASONS))


class WebhookSubscriptionFixture(Schema):
    id = Str(
        validate=ma.validate.Regexp(
            r"^whsub_[A-Za-z0-9_-]{8,34}$", error="Subscription ids are whsub_ and 8 to 34 characters."
        )
    )
    url = Str(required=True)
    events = EventTypes(required=True)
    description = Str(allow_none=True, validate=ma.validate.Length(max=500))
    enabled = Bool(load_default=True)
    api_version = Str(validate=ma.validate.OneOf(API_VERSIONS))
    signing_secret = Str(
        validate=ma.validate.Regexp(
            r"^whsec_[A-Za-z0-9_-]{16,200}$",
            error="A signing secret is whsec_ and 16 to 200 URL-safe characters.",
        )
    )
    last_error = Str(allow_none=True)
    disabled_at = AwareDateTime(allow_none=True)
    created_at = AwareDateTime()


HHMM = r"^([01]\d|2[0-3]):[0-5]\d$|^24:00$"
WEEKDAY_KEYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _intervals(value) -> None:
    """A day's hours: [["09:00", "12:00"], ...], each start before its end, in order, not overlapping."""
    last_end = ""
    for pair in value:
        if not (
            isinstance(pair, list)
            and len(pair) == 2
            and all(isinstance(t, str) for t in pair)
            and all(re.match(HHMM, t) for t in pair)
            and last_end <= pair[0] < pair[1]
        ):
            raise ma.ValidationError(f"{pair!r} is not an [start, end] pair of HH:MM after the one before.")
        last_end = pair[1]


def _hours(value) -> None:
    unknown = set(value) - set(WEEKDAY_KEYS)
    if unknown:
        raise ma.ValidationError(f"Unknown weekday {sorted(unknown)[0]!r}; use {', '.join(WEEKDAY_KEYS)}.")
    for day, intervals in value.items():
        if not isinstance(intervals, list):
            raise ma.ValidationError(f"{day}: a list of intervals.")
        _intervals(intervals)


Hours = ma.fields.Dict(keys=Str(), values=ma.fields.Raw(), validate=_hours)
Positive = ma.validate.Range(min=1)
DayMinutes = ma.validate.Range(min=1, max=1440)
BufferMinutes = ma.validate.Range(min=0, max=MAX_BUFFER_MINUTES)


class BookingServiceFixture(Schema):
    id = Str(required=True, validate=ma.validate.Length(min=1, max=40))
    name = Str(allow_none=True)
    minutes = ma.fields.Integer(strict=True, required=True, validate=DayMinutes)
    buffer_before_minutes = ma.fields.Integer(strict=True, load_default=0, validate=BufferMinutes)
    buffer_after_minutes = ma.fields.Integer(strict=True, load_default=0, validate=BufferMinutes)


class BookingTechFixture(Schema):
    id = Str(required=True, validate=ma.validate.Length(min=1, max=40))
    name = Str(allow_none=True)
    hours = Hours


def _quiet_hours(value) -> None:
    """["21:00", "08:00"]: two different HH:MM (shop local; the span may cross midnight)."""
    if not (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(t, str) and re.match(HHMM, t) and t != "24:00" for t in value)
        and value[0] != value[1]
    ):
        raise ma.ValidationError('A pair of two different times ["HH:MM", "HH:MM"] (start, end), or null.')


def _distinct_channels(value) -> None:
    if len(set(value)) != len(value):
        raise ma.ValidationError("A channel appears twice.")


def _template(value: str) -> None:
    """A text with only the known {placeholders}; no NUL or control characters but newlines and tabs."""
    if any((ord(c) < 32 and c not in "\n\r\t") or ord(c) == 127 for c in value):
        raise ma.ValidationError("Control characters are not allowed.")
    if not value.strip():
        raise ma.ValidationError("A template must not be blank.")
    try:
        fields = [
            (name, spec, conv) for _, name, spec, conv in string.Formatter().parse(value) if name is not None
        ]
    except ValueError as error:
        raise ma.ValidationError(f"Not a valid template: {error}; write {{{{ and }}}} for braces.") from None
    unknown = sorted({name for name, _, _ in fields if name not in TEMPLATE_PLACEHOLDERS})
    if unknown:
        known = ", ".join("{" + name + "}" for name in TEMPLATE_PLACEHOLDERS)
        raise ma.ValidationError(f"Unknown placeholder {{{unknown[0]}}}; use {known}.")
    if any(spec or conv for _, spec, conv in fields):
        raise ma.ValidationError(
            "Placeholders take no format spec or conversion: write {date}, not {date:%Y}."
        )


class ReminderRuleFixture(Schema):
    before_minutes = ma.fields.Integer(
        strict=True,
        required=True,
        validate=ma.validate.Range(min=REMINDER_MIN_MINUTES, max=REMINDER_MAX_MINUTES),
    )
    channels = ma.fields.List(
        Str(validate=ma.validate.OneOf(("sms", "email"))),
        required=True,
        validate=[ma.validate.Length(min=1, max=2), _distinct_channels],
    )


def _distinct_rules(value) -> None:
    minutes = [rule["before_minutes"] for rule in value]
    if len(set(minutes)) != len(minutes):
        raise ma.ValidationError("Two reminder rules have the same before_minutes.")


class CustomerMessagesFixture(Schema):
    confirmation = StrictBool(load_default=False)
    reschedule = StrictBool(load_default=False)
    cancellation = StrictBool(load_default=False)


class TemplatesFixture(Schema):
    reminder = Str(validate=[ma.validate.Length(max=TEMPLATE_MAX_LENGTH), _template])
    confirmation = Str(validate=[ma.validate.Length(max=TEMPLATE_MAX_LENGTH), _template])
    reschedule = Str(validate=[ma.validate.Length(max=TEMPLATE_MAX_LENGTH), _template])
    cancellation = Str(validate=[ma.validate.Length(max=TEMPLATE_MAX_LENGTH), _template])


class AppointmentMessagesFixture(Schema):
    """The booking keys of reminders, quiet hours, customer messages and their texts (issue 25):
    the fixture's rules, which the console's settings page loads too (shop.domain.appointments.settings)."""

    reminders = ma.fields.List(
        ma.fields.Nested(ReminderRuleFixture),
        load_default=list,
        validate=[ma.validate.Length(max=MAX_REMINDER_RULES), _distinct_rules],
    )
    quiet_hours = ma.fields.Raw(allow_none=True, load_default=None, validate=_quiet_hours)
    customer_messages = ma.fields.Nested(CustomerMessagesFixture, load_default=dict)
    templates = ma.fields.Nested(TemplatesFixture, load_default=dict)


class BookingFixture(AppointmentMessagesFixture):
    enabled = Bool(load_default=True)
    slot_minutes = ma.fields.Integer(strict=True, load_default=30, validate=DayMinutes)
    capacity = ma.fields.Integer(strict=True, load_default=1, validate=Positive)
    max_days_ahead = ma.fields.Integer(strict=True, load_default=60, validate=ma.validate.Range(min=0))
    min_notice_minutes = ma.fields.Integer(strict=True, load_default=0, validate=ma.validate.Range(min=0))
    hold_minutes = ma.fields.Integer(
        strict=True,
        load_default=HOLD_MINUTES_DEFAULT,
        validate=ma.validate.Range(min=1, max=HOLD_MINUTES_MAX),
    )
    hours = Hours
    closed_dates = ma.fields.List(ma.fields.Date(), load_default=list)
    services = ma.fields.List(ma.fields.Nested(BookingServiceFixture), load_default=list)
    techs = ma.fields.List(ma.fields.Nested(BookingTechFixture), load_default=list)
    # issue 25: reminders, quiet hours, customer messages and their texts come from the parent
    # (absent: all off)

    @ma.post_load
    def plain_dates(self, data, **kwargs):
        data["closed_dates"] = [day.isoformat() for day in data["closed_dates"]]
        data.setdefault("hours", {})
        return data


class AppointmentFixture(Schema):
    id = ma.fields.Integer(strict=True, validate=Positive)
    customer_name = Str(required=True, validate=ma.validate.Length(min=1, max=255))
    customer_phone = Str(required=True, validate=ma.validate.Length(min=1, max=50))
    customer_email = Str(allow_none=True, validate=ma.validate.Length(max=320))
    service_description = Str(allow_none=True, validate=ma.validate.Length(max=1000))
    scheduled_date = ma.fields.Date(required=True)
    scheduled_time = Str(required=True, validate=ma.validate.Regexp(r"^([01]\d|2[0-3]):[0-5]\d$"))
    duration_minutes = ma.fields.Integer(strict=True, load_default=30, validate=DayMinutes)
    status = Str(load_default="scheduled", validate=ma.validate.OneOf(STATUSES))
    ticket_id = Str(allow_none=True, validate=ma.validate.Length(min=1, max=255))
    tech_id = Str(allow_none=True, validate=ma.validate.Length(min=1, max=40))
    # a service of the tenant's booking settings: the booking then keeps that service's buffers
    service_id = Str(allow_none=True, validate=ma.validate.Length(min=1, max=40))
    location_id = ma.fields.Integer(strict=True, allow_none=True, validate=Positive)
    notes = Str(allow_none=True, validate=ma.validate.Length(max=5000))
    source = Str(allow_none=True)
    cancelled_at = AwareDateTime(allow_none=True)
    cancellation_reason = Str(allow_none=True)
    created_at = AwareDateTime()
    updated_at = AwareDateTime(allow_none=True)


def _currency(**kwargs):
    return Str(
        validate=ma.validate.Regexp(r"^[a-z]{3}$", error="A lower-case ISO 4217 code such as usd."), **kwargs
    )


class InvoiceFixture(Schema):
    id = RecordId()
    ticket_id = RecordId(allow_none=True)
    customer_id = RecordId(allow_none=True)
    number = Str(allow_none=True, validate=ma.validate.Length(max=64))
    status = Str(load_default="draft", validate=ma.validate.OneOf(INVOICE_STATUSES))
    currency = _currency(load_default="usd")
    total = Amount(load_default=0)
    sent_at = AwareDateTime(allow_none=True)
    paid_at = AwareDateTime(allow_none=True)
    voided_at = AwareDateTime(allow_none=True)
    void_reason = Str(allow_none=True, validate=ma.validate.Length(max=500))
    created_at = AwareDateTime()


class EstimateFixture(Schema):
    id = RecordId()
    ticket_id = RecordId(required=True)
    customer_id = RecordId(allow_none=True)
    number = Str(allow_none=True, validate=ma.validate.Length(max=64))
    status = Str(load_default="draft", validate=ma.validate.OneOf(ESTIMATE_STATUSES))
    currency = _currency(load_default="usd")
    total = Amount(load_default=0)
    sent_at = AwareDateTime(allow_none=True)
    approved_at = AwareDateTime(allow_none=True)
    approved_by = Str(allow_none=True, validate=ma.validate.Length(max=320))
    declined_at = AwareDateTime(allow_none=True)
    declined_by = Str(allow_none=True, validate=ma.validate.Length(max=320))
    decline_reason = Str(allow_none=True, validate=ma.validate.Length(max=500))
    created_at = AwareDateTime()


class PaymentFixture(Schema):
    id = RecordId()
    invoice_id = RecordId(required=True)
    amount = Amount(minimum=1, required=True)
    method = Str(load_default="other", validate=ma.validate.OneOf(PAYMENT_METHODS))
    created_at = AwareDateTime()


class RefundFixture(Schema):
    id = RecordId()
    payment_id = RecordId(required=True)
    amount = Amount(minimum=1, required=True)
    reason = Str(allow_none=True, validate=ma.validate.Length(max=500))
    created_at = AwareDateTime()


class LeadFixture(Schema):
    id = RecordId()
    name = Str(allow_none=True, validate=ma.validate.Length(max=255))
    email = Str(allow_none=True, validate=ma.validate.Length(max=320))
    phone = Str(allow_none=True, validate=ma.validate.Length(max=50))
    source = Str(allow_none=True, validate=ma.validate.Length(max=64))
    status = Str(load_default="new", validate=ma.validate.OneOf(LEAD_STATUSES))
    customer_id = RecordId(allow_none=True)
    converted_ticket_id = RecordId(allow_none=True)
    converted_at = AwareDateTime(allow_none=True)
    created_at = AwareDateTime()


class TenantFixture(Schema):
    id = Str(required=True, validate=ma.validate.Regexp(r"^[a-z0-9][a-z0-9_-]{0,63}$"))
    name = Str(required=True)
    timezone = Str(load_default="UTC", validate=_timezone)
    plan = Str(load_default="pro", validate=ma.validate.OneOf(PLANS))
    billing_status = Str(load_default="active", validate=ma.validate.OneOf(BILLING_STATUSES))
    current_period_end = AwareDateTime(allow_none=True)
    suspended = Bool(load_default=False)
    users = ma.fields.List(ma.fields.Nested(UserFixture), load_default=list)
    api_keys = ma.fields.List(ma.fields.Nested(ApiKeyFixture), load_default=list)
    customers = ma.fields.List(ma.fields.Nested(CustomerFixture), load_default=list)
    tickets = ma.fields.List(ma.fields.Nested(TicketFixture), load_default=list)
    conversations = ma.fields.List(ma.fields.Nested(ConversationFixture), load_default=list)
    suppressions = ma.fields.List(ma.fields.Nested(SuppressionFixture), load_default=list)
    invoices = ma.fields.List(ma.fields.Nested(InvoiceFixture), load_default=list)
    estimates = ma.fields.List(ma.fields.Nested(EstimateFixture), load_default=list)
    payments = ma.fields.List(ma.fields.Nested(PaymentFixture), load_default=list)
    refunds = ma.fields.List(ma.fields.Nested(RefundFixture), load_default=list)
    leads = ma.fields.List(ma.fields.Nested(LeadFixture), load_default=list)
    webhook_subscriptions = ma.fields.List(ma.fields.Nested(WebhookSubscriptionFixture), load_default=list)
    notifications = ma.fields.List(ma.fields.Nested(NotificationFixture), load_default=list)
    send_rate_per_minute = ma.fields.Integer(strict=True, allow_none=True, validate=ma.validate.Range(min=1))
    booking = ma.fields.Nested(BookingFixture, allow_none=True)
    ticket_statuses = ma.fields.List(
        Str(validate=ma.validate.Length(min=1, max=64)),
        allow_none=True,
        validate=[ma.validate.Length(min=1, max=50), _distinct],
    )
    # two-way messaging: numbers that reach the shop (E.164, unique across tenants; the first is the
    # `from` of its SMS), the address customers write to, and the HELP keyword's answer
    sms_numbers = ma.fields.List(Str(validate=ma.validate.Regexp(E164)), load_default=list)
    inbound_email = Str(allow_none=True, validate=[ma.validate.Length(max=320), ma.validate.Email()])
    help_text = Str(allow_none=True, validate=ma.validate.Length(min=1, max=1600))
    appointments = ma.fields.List(ma.fields.Nested(AppointmentFixture), load_default=list)


class FixtureFile(Schema):
    tenants = ma.fields.List(ma.fields.Nested(TenantFixture), required=True)

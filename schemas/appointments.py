"""Appointment bodies, filters, the slot query, and what the appointment endpoints return."""

import re
from datetime import date

import marshmallow as ma

from schemas.common import (
    INT32_MAX,
    Int32,
    PaginationArgsSchema,
    QueryBool,
    QueryInt32,
    Schema,
    Stamp,
    list_schema,
)
from shop.models.appointments import (
    HOLD_ID_PATTERN,
    REMINDER_KINDS,
    REMINDER_REASONS,
    REMINDER_STATUSES,
    STATUSES,
)
from shop.platform.errors import ApiError

# ASCII digits only, matched whole: "\d" would take other scripts' digits and "$" a trailing newline
DATE_PATTERN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
TIME_PATTERN = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")
MAX_DURATION_MINUTES = 1440


def _code(code: str, **kwargs) -> dict:
    return {"metadata": {"error_code": code}, **kwargs}


class LocalDate(ma.fields.Field):
    """A real calendar date written YYYY-MM-DD (2026-02-30 is refused)."""

    OPENAPI = {
        "type": "string",
        "format": "date",
        "pattern": f"^{DATE_PATTERN.pattern}$",
        "maxLength": 10,
        "example": "2026-12-01",
    }

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, str) or not DATE_PATTERN.fullmatch(value):
            raise ma.ValidationError("Must be a date written YYYY-MM-DD.")
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise ma.ValidationError("Not a real calendar date.") from None

    def _serialize(self, value, attr, obj, **kwargs):
        return value.isoformat() if isinstance(value, date) else value


class LocalTime(ma.fields.String):
    """A wall-clock time HH:MM, 24-hour (00:00 to 23:59)."""

    OPENAPI = {"type": "string", "pattern": f"^{TIME_PATTERN.pattern}$", "example": "10:00"}

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, str) or not TIME_PATTERN.fullmatch(value):
            raise ma.ValidationError("Must be a time written HH:MM (00:00 to 23:59).")
        return value


class Duration(ma.fields.Field):
    """Whole minutes, 1 to 1440: a JSON number, never a string, boolean or fraction."""

    OPENAPI = {"type": "integer", "minimum": 1, "maximum": MAX_DURATION_MINUTES, "example": 60}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ma.ValidationError("Must be a whole number of minutes.")
        if not 1 <= value <= MAX_DURATION_MINUTES:
            raise ma.ValidationError(f"Must be between 1 and {MAX_DURATION_MINUTES} minutes.")
        return value


class TicketRef(ma.fields.Field):
    """A ticket id: a non-empty string, or a positive integer given as its digit string."""

    OPENAPI = {
        "anyOf": [
            {"type": "string", "minLength": 1, "maxLength": 255},
            {"type": "integer", "minimum": 1, "maximum": INT32_MAX},
        ],
        "example": "1001",
    }

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, int) and not isinstance(value, bool):
            if not 1 <= value <= INT32_MAX:
                raise ma.ValidationError(f"Must be a positive integer no larger than {INT32_MAX}.")
            return str(value)
        if not isinstance(value, str) or not 1 <= len(value) <= 255:
            raise ma.ValidationError("Must be a ticket id: 1 to 255 characters or a positive integer.")
        return value


def _text(max_length: int, required: bool = False, allow_none: bool = True, minimum: int = 0, **kwargs):
    return ma.fields.String(
        required=required,
        allow_none=allow_none,
        validate=ma.validate.Length(min=minimum, max=max_length),
        **kwargs,
    )


def _email(**kwargs):
    return ma.fields.String(
        allow_none=True,
        validate=[ma.validate.Length(max=320), ma.validate.Email()],
        metadata={"format": "email"},
        **kwargs,
    )


class AppointmentQueryArgsSchema(PaginationArgsSchema):
    date_from = LocalDate(**_code("invalid_date_from"))
    date_to = LocalDate(**_code("invalid_date_to"))
    status = ma.fields.String(validate=ma.validate.OneOf(STATUSES), **_code("invalid_status"))
    location_id = QueryInt32(**_code("invalid_location_id"))
    customer_email = ma.fields.String(
        validate=ma.validate.Length(min=1, max=320), **_code("invalid_customer_email")
    )
    ticket_id = ma.fields.String(validate=ma.validate.Length(min=1, max=255), **_code("invalid_ticket_id"))
    tech_id = ma.fields.String(validate=ma.validate.Length(min=1, max=40))


class SlotQueryArgsSchema(PaginationArgsSchema):
    """GET /appointments/slots: date (required), service_id and tech_id, limit and cursor."""

    date = LocalDate(required=True, **_code("invalid_date"))
    service_id = ma.fields.String(validate=ma.validate.Length(min=1, max=40), **_code("invalid_service_id"))
    tech_id = ma.fields.String(validate=ma.validate.Length(min=1, max=40))
    explain = QueryBool(
        load_default=False,
        metadata={
            "description": "true: every unavailable slot carries its `reasons`, and the slots a day-wide "
            "rule (closed day or date, booking window, the tech's hours) removes are listed too."
        },
    )


def _hold_id(description: str):
    not_a_hold = "Not a slot hold id (hold_...)."
    return ma.fields.String(
        validate=ma.validate.Regexp(HOLD_ID_PATTERN, error=not_a_hold),
        metadata={
            "pattern": HOLD_ID_PATTERN,
            "example": "hold_5f2c0e5b9a1d4c7e8f0a1b2c",
            "description": description,
        },
    )


class AppointmentCreateSchema(Schema):
    customer_name = _text(255, required=True, allow_none=False, minimum=1)
    customer_phone = _text(50, required=True, allow_none=False, minimum=1)
    scheduled_date = LocalDate(required=True, **_code("invalid_scheduled_date"))
    scheduled_time = LocalTime(required=True, **_code("invalid_scheduled_time"))
    customer_email = _email()
    service_description = _text(1000)
    duration_minutes = Duration(load_default=30, **_code("invalid_duration_minutes"))
    notes = _text(5000)
    ticket_id = TicketRef(allow_none=True)
    hold_id = _hold_id(
        "A live slot hold for exactly this span: the booking takes its place (and its "
        "service, tech and buffers) and uses it up."
    )
    service_id = ma.fields.String(
        allow_none=True,
        validate=ma.validate.Length(min=1, max=40),
        metadata={
            "error_code": "invalid_service_id",
            "description": "A service of the booking settings (its buffers apply).",
        },
    )
    tech_id = ma.fields.String(
        allow_none=True,
        validate=ma.validate.Length(min=1, max=40),
        metadata={"description": "A tech of the booking settings' roster."},
    )

    @ma.post_load(pass_original=True)
    def duration_from_the_hold(self, data, original, **kwargs):
        # with a hold, a duration left out is the hold's, not the default 30
        if "hold_id" in data and isinstance(original, dict) and "duration_minutes" not in original:
            del data["duration_minutes"]
        return data


class ActivityBookingSchema(AppointmentCreateSchema):
    """In-app booking (dashboard or online booking): the create body plus who and where."""

    location_id = Int32(allow_none=True)
    source = ma.fields.String(
        load_default="online_booking", validate=ma.validate.OneOf(("online_booking", "staff"))
    )
    status = ma.fields.String(validate=ma.validate.OneOf(("scheduled", "pending", "confirmed")))


class AppointmentUpdateSchema(Schema):
    OPENAPI = {"minProperties": 1}  # an empty body is 400 no_fields

    customer_name = _text(255, allow_none=False, minimum=1)
    customer_phone = _text(50, allow_none=False, minimum=1)
    customer_email = _email()
    service_description = _text(1000)
    scheduled_date = LocalDate(**_code("invalid_scheduled_date"))
    scheduled_time = LocalTime(**_code("invalid_scheduled_time"))
    duration_minutes = Duration(**_code("invalid_duration_minutes"))
    status = ma.fields.String(validate=ma.validate.OneOf(STATUSES), **_code("invalid_status"))
    notes = _text(5000)
    ticket_id = TicketRef(allow_none=True)

    @ma.pre_load
    def require_a_known_field(self, data, **kwargs):
        if isinstance(data, dict) and not any(key in self.fields for key in data):
            raise ApiError(400, "no_fields", "Send at least one appointment field to change.")
        return data


class AppointmentCancelSchema(Schema):
    reason = _text(500)


class LinkTicketSchema(Schema):
    ticket_id = TicketRef(required=True, allow_none=False)


class DateText(ma.fields.String):
    """An output calendar date written YYYY-MM-DD."""

    def _serialize(self, value, attr, obj, **kwargs):
        if isinstance(value, date):
            return value.isoformat()
        return super()._serialize(value, attr, obj, **kwargs)


class AppointmentSchema(Schema):
    """The appointment as the REST resource, and the completed/no_show event data."""

    object = ma.fields.Constant("appointment")
    id = ma.fields.Integer(metadata={"example": 200})
    customer_name = ma.fields.String(metadata={"example": "Ann Lee"})
    customer_phone = ma.fields.String(metadata={"example": "+15555550100"})
    customer_email = ma.fields.String(allow_none=True)
    service_description = ma.fields.String(allow_none=True)
    scheduled_date = DateText(metadata={"example": "2026-12-01"})
    scheduled_time = ma.fields.String(metadata={"example": "10:00"})
    duration_minutes = ma.fields.Integer(metadata={"example": 30})
    status = ma.fields.String(metadata={"example": "scheduled"})
    ticket_id = ma.fields.String(allow_none=True)
    tech_id = ma.fields.String(allow_none=True)
    location_id = ma.fields.Integer(allow_none=True)
    notes = ma.fields.String(allow_none=True)
    source = ma.fields.String(allow_none=True)
    cancelled_at = Stamp(allow_none=True)
    cancellation_reason = ma.fields.String(allow_none=True)
    created_at = Stamp()
    updated_at = Stamp(allow_none=True)


class SlotReasonSchema(Schema):
    """Why a slot is not offered, with the numbers behind it (explain=true)."""

    code = ma.fields.String(
        metadata={
            "enum": [
                "closed_day",
                "closed_date",
                "outside_hours",
                "min_notice",
                "too_far_ahead",
                "full",
                "held",
                "tech_off",
                "tech_busy",
                "span_crosses_break",
                "buffer",
            ]
        }
    )
    booked = ma.fields.Integer(metadata={"description": "Bookings in the fullest window the span covers"})
    held = ma.fields.Integer(metadata={"description": "Live holds in that window"})
    capacity = ma.fields.Integer(metadata={"description": "Places per slot (1 for a tech)"})
    tech_id = ma.fields.String()
    min_notice_minutes = ma.fields.Integer()
    max_days = ma.fields.Integer()


class SlotSchema(Schema):
    object = ma.fields.Constant("appointment_slot")
    time = ma.fields.String(allow_none=True, metadata={"example": "09:30"})
    available = ma.fields.Boolean()
    remaining = ma.fields.Integer()
    reasons = ma.fields.List(
        ma.fields.Nested(SlotReasonSchema),
        metadata={
            "description": "Only with explain=true: why the slot is unavailable (empty when it is available)."
        },
    )


class SlotServiceSchema(Schema):
    id = ma.fields.String()
    minutes = ma.fields.Integer(allow_none=True)


class SlotTechSchema(Schema):
    id = ma.fields.String()


class SlotListSchema(list_schema(SlotSchema, "SlotListBase")):
    """The day's slots plus `closed`, the advisory flags and the service/tech echoes."""

    closed = ma.fields.Boolean()
    disabled = ma.fields.Boolean()
    too_far_ahead = ma.fields.Boolean()
    max_days = ma.fields.Integer()
    unknown_tech = ma.fields.Boolean()
    tech_off = ma.fields.Boolean()
    service = ma.fields.Nested(SlotServiceSchema)
    tech = ma.fields.Nested(SlotTechSchema)


AppointmentListSchema = list_schema(AppointmentSchema, "AppointmentListSchema")


class AppointmentReminderSchema(Schema):
    """A reminder or customer message of an appointment (issue 25); `sent` means handed to the
    send pipeline, the message carries its own delivery status."""

    object = ma.fields.Constant("appointment_reminder")
    id = ma.fields.String(metadata={"example": "rem_5f2c0e5b9a1d4c7e8f0a1b2c"})
    appointment_id = ma.fields.Integer(metadata={"example": 200})
    kind = ma.fields.String(metadata={"enum": list(REMINDER_KINDS)})
    before_minutes = ma.fields.Integer(allow_none=True, metadata={"example": 1440})
    scheduled_for = Stamp()
    status = ma.fields.String(metadata={"enum": list(REMINDER_STATUSES)})
    reason = ma.fields.String(allow_none=True, metadata={"enum": [*REMINDER_REASONS, None]})
    channel = ma.fields.String(allow_none=True, metadata={"enum": ["sms", "email", None]})
    message_id = ma.fields.Integer(allow_none=True)
    created_at = Stamp()
    updated_at = Stamp()


class AppointmentReminderListSchema(list_schema(AppointmentReminderSchema, "AppointmentReminderListBase")):
    """An appointment's reminders and customer messages, by scheduled_for then id, with the total."""

    total = ma.fields.Integer()


class SlotHoldCreateSchema(Schema):
    """POST /appointments/slots/holds: the span to hold, as the slot list offers it."""

    date = LocalDate(required=True, **_code("invalid_date"))
    time = LocalTime(required=True, **_code("invalid_time"))
    service_id = ma.fields.String(validate=ma.validate.Length(min=1, max=40), **_code("invalid_service_id"))
    tech_id = ma.fields.String(validate=ma.validate.Length(min=1, max=40))
    duration_minutes = Duration(
        metadata={
            "error_code": "invalid_duration_minutes",
            "description": "Default: the service's minutes, else one slot.",
        }
    )


class SlotHoldSchema(Schema):
    object = ma.fields.Constant("slot_hold")
    id = ma.fields.String(metadata={"example": "hold_5f2c0e5b9a1d4c7e8f0a1b2c"})
    date = DateText(attribute="scheduled_date", metadata={"example": "2026-12-01"})
    time = ma.fields.String(attribute="scheduled_time", metadata={"example": "10:00"})
    duration_minutes = ma.fields.Integer(metadata={"example": 90})
    buffer_before_minutes = ma.fields.Integer(metadata={"example": 0})
    buffer_after_minutes = ma.fields.Integer(metadata={"example": 15})
    service_id = ma.fields.String(allow_none=True)
    tech_id = ma.fields.String(allow_none=True)
    status = ma.fields.String(
        attribute="state",
        metadata={"enum": ["active", "expired", "released", "consumed"], "example": "active"},
    )
    expires_at = Stamp(metadata={"example": "2026-11-25T12:10:00.000Z"})
    created_at = Stamp()
    appointment_id = ma.fields.Integer(allow_none=True, metadata={"description": "The booking that used it."})

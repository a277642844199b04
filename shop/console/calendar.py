"""The Calendar page's week: each day's appointments and slots (with capacity and reasons) from the
appointment and slot domain functions, in the shop's own timezone."""

from dataclasses import dataclass, field
from datetime import UTC, date, timedelta

from schemas.appointments import AppointmentSchema
from shop.domain.appointments import appointments as appointment_rules
from shop.domain.appointments import reminders as reminder_rules
from shop.domain.appointments.slots import booking_of, list_slots, local_today

# the weeks the page can show: date arithmetic a week either side stays within Python's dates
FIRST_DAY, LAST_DAY = date(1900, 1, 1), date(9998, 12, 31)
APPOINTMENTS_SHOWN = 500  # a week's appointments on one page; more is the API's job
SLOTS_PER_DAY = 1000  # every start of a day's grid (a 1-minute grid has 1440)
TERMINAL = ("cancelled", "completed", "no_show")
APPOINTMENT = AppointmentSchema()
REASONS = {
    "closed_day": "The shop is closed this weekday.",
    "closed_date": "The shop is closed on this date.",
    "outside_hours": "Outside opening hours.",
    "span_crosses_break": "A booking here would run into a break.",
    "min_notice": "Too soon: online booking needs {min_notice_minutes} minutes' notice.",
    "too_far_ahead": "Too far ahead: online booking takes at most {max_days} days ahead.",
    "full": "Full: {booked} booked and {held} held of {capacity} places.",
    "held": "Held: {booked} booked and {held} held (checkouts in progress) of {capacity} places.",
    "buffer": "The buffer around a neighbouring booking takes the place ({booked} booked, {held} held).",
    "tech_off": "Technician {tech_id} is off then.",
    "tech_busy": "Technician {tech_id} is busy.",
}


@dataclass
class Day:
    """One day of the week: its appointments, its slots, and why it offers none if it does not."""

    day: date
    today: bool
    appointments: list[dict] = field(default_factory=list)
    slots: list[dict] = field(default_factory=list)
    closed_because: str | None = None


@dataclass
class Week:
    """Seven days from a Monday, with the shop's capacity per slot and its timezone."""

    monday: date
    timezone: str
    capacity: int | None
    days: list[Day]
    truncated: bool

    @property
    def previous(self) -> date | None:
        earlier = self.monday - timedelta(days=7)
        return earlier if earlier >= FIRST_DAY else None

    @property
    def next(self) -> date | None:
        later = self.monday + timedelta(days=7)
        return later if later + timedelta(days=6) <= LAST_DAY else None


def monday_of(day: date) -> date:
    """The Monday starting the week that holds `day`."""
    return day - timedelta(days=day.weekday())


def shop_today(tenant_id: str) -> date:
    """Today on the shop's wall clock."""
    return local_today(booking_of(tenant_id)[1])


def week(tenant_id: str, any_day: date) -> Week:
    """The week holding `any_day`: appointments by day and time, slots with capacity and reasons."""
    booking, zone = booking_of(tenant_id)
    monday, today = monday_of(any_day), local_today(zone)
    days = [Day(monday + timedelta(days=n), monday + timedelta(days=n) == today) for n in range(7)]
    listed = appointment_rules.list_appointments(
        tenant_id,
        {"date_from": monday, "date_to": days[-1].day, "limit": APPOINTMENTS_SHOWN, "cursor": None},
    )
    by_day = {d.day.isoformat(): d for d in days}
    rows = sorted(
        APPOINTMENT.dump(listed["data"], many=True),
        key=lambda a: (a["scheduled_date"], a["scheduled_time"], a["id"]),
    )
    sent_and_due = reminder_rules.reminders_by_appointment(tenant_id, [row["id"] for row in rows])
    for row in rows:
        row["final"] = row["status"] in TERMINAL
        row["reminders"] = [reminder_line(r, zone) for r in sent_and_due.get(row["id"], [])]
        by_day[row["scheduled_date"]].appointments.append(row)
    for d in days:
        _fill_slots(tenant_id, d)
    capacity = booking.capacity if booking else None
    return Week(monday, zone.key, capacity, days, listed["has_more"])


KIND_LABELS = {
    "confirmation": "Confirmation",
    "reschedule": "Moved notice",
    "cancellation": "Cancellation notice",
}
REMINDER_REASONS = {
    "too_late": "too late when booked",
    "no_channel": "no phone or email to use",
    "rescheduled": "the appointment moved",
    "appointment_cancelled": "the appointment was cancelled",
    "appointment_completed": "the appointment was completed",
    "appointment_no_show": "the customer did not come",
    "provider_failed": "the provider refused it",
    "settings_changed": "the shop changed its reminder settings",
}


def reminder_line(row, zone) -> dict:
    """A reminder or customer message as the Calendar lists it: what, when (shop time), state."""
    if row.kind == "reminder":
        hours, minutes = divmod(row.before_minutes, 60)
        ahead = f"{hours} h" if not minutes else (f"{hours} h {minutes} min" if hours else f"{minutes} min")
        label = f"Reminder {ahead} before"
    else:
        label = KIND_LABELS[row.kind]
    when = row.scheduled_for.replace(tzinfo=UTC).astimezone(zone)
    return {
        "label": label,
        "when": when.strftime("%a %-d %b %H:%M"),
        "status": row.status,
        "channel": row.channel,
        "reason": REMINDER_REASONS.get(row.reason, row.reason) if row.reason else None,
    }


def _fill_slots(tenant_id: str, day: Day) -> None:
    """The day's slot grid as the slot list explains it, or the one reason the whole day is shut."""
    listed = list_slots(tenant_id, day.day, limit=SLOTS_PER_DAY, explain=True)
    if listed.get("disabled"):
        day.closed_because = "Online booking is not set up or is turned off for this shop."
    elif listed.get("too_far_ahead"):
        day.closed_because = REASONS["too_far_ahead"].format(max_days=listed["max_days"])
    elif listed["closed"]:
        day.closed_because = "Closed."
    else:
        day.slots = [{**slot, "why": [reason_text(r) for r in slot["reasons"]]} for slot in listed["data"]]


def reason_text(reason: dict) -> str:
    """A slot reason (explain) as a sentence with its numbers."""
    template = REASONS.get(reason["code"], reason["code"])
    try:
        return template.format(**{"booked": 0, "held": 0, "capacity": 0, **reason})
    except (KeyError, IndexError):  # a reason without the numbers its sentence names
        return reason["code"].replace("_", " ")

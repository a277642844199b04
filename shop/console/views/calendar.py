"""The Calendar: a week of appointments and slots with capacity, booking, moving (by form or drag),
cancel, complete and no-show."""

import marshmallow as ma
from flask import g, redirect, url_for

from schemas.appointments import (
    AppointmentCancelSchema,
    AppointmentCreateSchema,
    AppointmentUpdateSchema,
    LocalDate,
)
from shop.console import calendar, forms, nav
from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import query_value, render
from shop.domain import actor as actors
from shop.domain.appointments import appointments as appointment_rules
from shop.platform.errors import ApiError

nav.add(nav.NavItem("console.calendar_week", "Calendar", "appointments.read"))
DONE = {
    "booked": "Booked.",
    "moved": "Moved.",
    "cancelled": "Cancelled.",
    "completed": "Marked completed.",
    "no_show": "Marked as a no-show.",
}
BOOKING_FIELDS = {  # form field: longest value the API's schema could take
    "customer_name": 255,
    "customer_phone": 50,
    "customer_email": 320,
    "service_description": 1000,
    "notes": 5000,
}


@bp.route("/calendar", methods=["GET"])
@page("appointments.read")
def calendar_week():
    """The week holding ?week=YYYY-MM-DD (this week by default) in the shop's timezone."""
    chosen = _day("week", query_value("week", 10)) or calendar.shop_today(g.tenant.id)
    shown = calendar.week(g.tenant.id, chosen)
    book_date = _day("book_date", query_value("book_date", 10))
    return render(
        "console/calendar.html",
        week=shown,
        notice=DONE.get(query_value("done", 20) or ""),
        can_write="appointments.write" in g.principal.scopes,
        book_date=(book_date or chosen).isoformat(),
        book_time=query_value("book_time", 5) or "",
    )


@bp.route("/calendar/book", methods=["POST"])
@page("appointments.write")
def calendar_book():
    """Book an appointment through the API's own schema and rules (capacity, slot_unavailable)."""
    body = {
        "scheduled_date": forms.text("scheduled_date", 10),
        "scheduled_time": forms.text("scheduled_time", 5),
    }
    for name, longest in BOOKING_FIELDS.items():
        body[name] = forms.text(name, longest, required=name in ("customer_name", "customer_phone"))
    if (minutes := _minutes()) is not None:
        body["duration_minutes"] = minutes
    loaded = forms.load(AppointmentCreateSchema(), {k: v for k, v in body.items() if v is not None})
    booked = appointment_rules.create_appointment(g.tenant.id, loaded, _actor())
    return _to_week(booked, "booked")


@bp.route("/calendar/move", methods=["POST"])
@page("appointments.write")
def calendar_move():
    """Move an appointment to a new day and time (and length): the API's PATCH, with its schema,
    capacity check, reminder re-planning and appointment.updated."""
    appointment_id = forms.record_id("appointment_id")
    body = {
        "scheduled_date": forms.text("scheduled_date", 10),
        "scheduled_time": forms.text("scheduled_time", 5),
    }
    if (minutes := _minutes()) is not None:
        body["duration_minutes"] = minutes
    changes = forms.load(AppointmentUpdateSchema(), body)
    try:
        moved = appointment_rules.update_appointment(g.tenant.id, appointment_id, changes, _actor())
    except ApiError as refused:
        raise _move_refusal(refused) from None
    return _to_week(moved, "moved")


@bp.route("/calendar/cancel", methods=["POST"])
@page("appointments.write")
def calendar_cancel():
    """Cancel an appointment, with an optional reason (once: a second cancel is the API's 422)."""
    appointment_id = forms.record_id("appointment_id")
    reason = forms.load(AppointmentCancelSchema(), {"reason": forms.text("reason", 500, required=False)})
    done = appointment_rules.cancel_appointment(g.tenant.id, appointment_id, reason.get("reason"), _actor())
    return _to_week(done, "cancelled")


@bp.route("/calendar/complete", methods=["POST"])
@page("appointments.write")
def calendar_complete():
    """Mark an appointment completed (the API's transition rules; no event from the dashboard)."""
    appointment_id = forms.record_id("appointment_id")
    done = appointment_rules.finish_appointment(g.tenant.id, appointment_id, "completed", _actor())
    return _to_week(done, "completed")


@bp.route("/calendar/no-show", methods=["POST"])
@page("appointments.write")
def calendar_no_show():
    """Mark an appointment a no-show (the API's transition rules; no event from the dashboard)."""
    appointment_id = forms.record_id("appointment_id")
    done = appointment_rules.finish_appointment(g.tenant.id, appointment_id, "no_show", _actor())
    return _to_week(done, "no_show")


def _actor():
    """Who is at the console (a teammate, or an integrator's key), acting from the dashboard."""
    return actors.teammate(g.actor.name, "dashboard")


def _minutes():
    """The optional duration field: a whole number as the API's JSON would carry it, else the text
    itself, which the schema refuses by name (ASCII digits only: int() of "²" would raise)."""
    minutes = forms.text("duration_minutes", 6, required=False)
    if minutes is None:
        return None
    return int(minutes) if minutes.isascii() and minutes.isdigit() else minutes


def _move_refusal(refused: ApiError) -> ApiError:
    """The PATCH's refusal as the Calendar says it: a full slot names the free starts it was offered,
    a finished appointment says it cannot move (the API's "reset its status" is not a Calendar action)."""
    if refused.code == "slot_unavailable":
        offered = (refused.details or {}).get("next_available") or []
        starts = ", ".join(f"{slot['date']} {slot['time']}" for slot in offered)
        tail = f" Free instead: {starts}." if starts else " No free start is offered after it."
        refused.message = f"Not moved: {refused.message}{tail}"
    elif refused.code == "status_reset_required":
        refused.message = "Not moved: a cancelled, completed or no-show appointment cannot be moved."
    return refused


def _day(name: str, value: str | None):
    """A YYYY-MM-DD query value as a date the calendar can show, or a 400 page naming it."""
    if value is None:
        return None
    try:
        day = LocalDate().deserialize(value)
    except ma.ValidationError:
        day = None
    if day is None or not calendar.FIRST_DAY <= day <= calendar.LAST_DAY:
        raise ApiError(400, "invalid_field", f"{name}: a real date written YYYY-MM-DD.", param=name)
    return day


def _to_week(appointment, done: str):
    """Back to the appointment's week, at the appointment."""
    day = appointment.scheduled_date
    week = day.isoformat() if hasattr(day, "isoformat") else str(day)
    target = url_for("console.calendar_week", week=week, done=done)
    return redirect(f"{target}#appointment-{appointment.id}", 303)

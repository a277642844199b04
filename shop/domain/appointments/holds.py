"""Slot holds: a place taken for a few minutes while a customer finishes checkout.

A hold counts against capacity and its tech's calendar exactly like a booking, until it is
released, consumed by the booking it was taken for, or its `expires_at` passes: an expired hold
simply stops matching the query that counts places, so no job has to end it. Holds emit no events
and are never appointments.
"""

import re
import secrets
from datetime import date, timedelta

from shop import clock
from shop.db import locked, write_transaction
from shop.domain.appointments.slots import (
    Booking,
    DayPlan,
    SlotTaken,
    Span,
    booking_of,
    lock_day,
    minutes,
    slot_utc,
    span_of,
)
from shop.models import SlotHold
from shop.models.appointments import HOLD_ID_PATTERN
from shop.platform.errors import ApiError, not_found

HOLD_ID = re.compile(HOLD_ID_PATTERN.replace("$", r"\Z"))


def new_hold_id() -> str:
    """hold_ and an unguessable token."""
    return "hold_" + secrets.token_hex(12)


def create_hold(tenant_id: str, body: dict) -> SlotHold:
    """Take a place for `hold_minutes`, if online booking would offer it; else 409 with the reasons."""
    booking, zone = booking_of(tenant_id)
    span = _span(booking, body)
    day, time = body["date"], body["time"]
    if slot_utc(day, minutes(time), zone) is None:
        raise ApiError(
            400,
            "invalid_time",
            f"{time} does not exist on {day.isoformat()} in {zone.key} (the clocks skip it).",
            param="time",
        )
    try:
        with write_transaction():
            lock_day(tenant_id, day)
            plan = DayPlan(tenant_id, booking, day, zone, span, plain=True)
            reasons = plan.day_reasons() + plan.reasons(minutes(time), slot_utc(day, minutes(time), zone))
            if reasons:
                raise SlotTaken(day, time, span, reasons)
            return SlotHold.create(
                id=new_hold_id(),
                tenant=tenant_id,
                scheduled_date=day,
                scheduled_time=time,
                duration_minutes=span.length,
                service_id=body.get("service_id"),
                tech_id=span.tech_id,
                buffer_before_minutes=span.before,
                buffer_after_minutes=span.after,
                expires_at=clock.now() + timedelta(minutes=booking.hold_minutes),
                created_at=clock.now(),
            )
    except SlotTaken as taken:
        raise taken.answer(tenant_id, param="time") from None


def _span(booking: Booking | None, body: dict) -> Span:
    """The span asked for; 409 when the shop takes no online bookings, 400 for an unknown service or tech."""
    if booking is None or not booking.enabled:
        raise ApiError(
            409,
            "slot_unavailable",
            "Online booking is disabled for this shop.",
            param="date",
            details={"reasons": [{"code": "disabled"}], "next_available": []},
        )
    service_id, tech_id = body.get("service_id"), body.get("tech_id")
    if service_id is not None and booking.service(service_id) is None:
        raise ApiError(
            400,
            "invalid_service_id",
            f"No service {service_id!r} in the booking settings.",
            param="service_id",
        )
    if tech_id is not None and booking.tech(tech_id) is None:
        raise ApiError(400, "invalid_field", f"No tech {tech_id!r} on the roster.", param="tech_id")
    return span_of(booking, service_id, body.get("duration_minutes"), tech_id)


def find_hold(tenant_id: str, hold_id: str, param: str = "id") -> SlotHold:
    """The tenant's hold, or 404 (another tenant's is just as missing); called inside a write
    transaction, so it is locked until that transaction ends (shop.db.locked)."""
    found = None
    if HOLD_ID.fullmatch(hold_id):  # anything else is no hold of ours: not worth a query (nor a NUL to it)
        found = locked(SlotHold.for_tenant(tenant_id).where(SlotHold.id == hold_id)).first()
    if found is None:
        raise not_found("slot hold", hold_id, param)
    return found


def release_hold(tenant_id: str, hold_id: str) -> SlotHold:
    """Give the place back; releasing a released or expired hold changes nothing, a consumed one is 409."""
    with write_transaction():
        hold = find_hold(tenant_id, hold_id)
        if hold.status == "consumed":
            raise ApiError(
                409,
                "hold_consumed",
                f"The hold was consumed by a booking; cancel the appointment {hold.appointment_id} instead.",
                param="id",
            )
        if hold.state == "active":
            hold.status, hold.released_at = "released", clock.now()
            hold.save()
        return hold


# what each unusable state tells the client to do
UNUSABLE = {
    "expired": "The hold expired; take a new hold or book without one.",
    "released": "The hold was released; take a new hold or book without one.",
    "consumed": "The hold was already used for a booking.",
}


def consume_hold(tenant_id: str, hold_id: str, day: date, time: str, length: int | None) -> SlotHold:
    """Inside the booking's write transaction: check the hold fits the body, then mark it consumed.

    The conditional UPDATE claims it: of two bookings racing with one hold, only one changes the row
    (SQLite's one writer; on PostgreSQL the second waits on the row lock and then matches nothing).
    """
    hold = find_hold(tenant_id, hold_id, param="hold_id")
    state = hold.state
    if state != "active":
        raise ApiError(409, f"hold_{state}", UNUSABLE[state], param="hold_id")
    held = {
        "scheduled_date": hold.scheduled_date.isoformat(),
        "scheduled_time": hold.scheduled_time,
        "duration_minutes": hold.duration_minutes,
    }
    asked = {
        "scheduled_date": day.isoformat(),
        "scheduled_time": time,
        "duration_minutes": hold.duration_minutes if length is None else length,
    }
    differs = [name for name in held if held[name] != asked[name]]
    if differs:
        raise ApiError(
            409,
            "hold_mismatch",
            f"The hold is for {held['scheduled_date']} "
            f"{held['scheduled_time']}, {held['duration_minutes']} minutes; the body asks for "
            "another span.",
            param=differs[0],
            details={"hold": held},
        )
    claimed = (
        SlotHold.update(status="consumed")
        .where((SlotHold.id == hold.id) & (SlotHold.status == "active") & (SlotHold.expires_at > clock.now()))
        .execute()
    )
    if claimed != 1:
        raise ApiError(409, "hold_consumed", UNUSABLE["consumed"], param="hold_id")
    return hold


def mark_consumed_by(hold: SlotHold, appointment_id: int) -> None:
    SlotHold.update(appointment_id=appointment_id).where(SlotHold.id == hold.id).execute()

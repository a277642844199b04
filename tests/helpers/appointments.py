"""Shared fixtures for the appointment tests: a shop with booking settings, tickets and a fixed clock."""

from datetime import datetime

from shop import clock
from shop.models import Appointment, Event

BOOKING = {
    "enabled": True,
    "slot_minutes": 30,
    "capacity": 2,
    "max_days_ahead": 60,
    "min_notice_minutes": 60,
    "hours": {
        "mon": [["09:00", "17:00"]],
        "tue": [["09:00", "12:00"], ["13:00", "17:00"]],
        "wed": [],
        "thu": [["09:00", "17:00"]],
        "fri": [["09:00", "17:00"]],
        "sat": [["10:00", "14:00"]],
        "sun": [],
    },
    "closed_dates": ["2026-12-25"],
    "services": [
        {"id": "screen-repair", "name": "Screen repair", "minutes": 90},
        {"id": "quick-check", "name": "Quick check", "minutes": 30},
    ],
    "techs": [
        {"id": "alex", "name": "Alex", "hours": {"mon": [["09:00", "13:00"]]}},
        {"id": "bo", "name": "Bo"},
    ],
}
TICKETS = [
    {"id": "1001"},
    {"id": "1002", "billing_only": True},
    {"id": "1003", "hidden": True},
    {"id": "1004", "deleted": True},
]
BASE = "/api/v1/appointments"
NEW = {
    "customer_name": "Ann Lee",
    "customer_phone": "+15555550100",
    "scheduled_date": "2026-12-01",
    "scheduled_time": "10:00",
}


def set_clock(iso_utc: str) -> None:
    """Move the app's clock to a fixed UTC instant (naive ISO string)."""
    clock.advance((datetime.fromisoformat(iso_utc) - clock.now()).total_seconds())


def events(type_: str | None = None) -> list[dict]:
    """Event data in emission order, optionally of one type."""
    query = Event.select().order_by(Event.created, Event.id)
    return [e.data for e in query if type_ is None or e.type == type_]


def event_types() -> list[str]:
    return [e.type for e in Event.select().order_by(Event.created)]


def snapshot() -> tuple:
    """Every appointment row and the number of events: what a rejected write must not change."""
    rows = [tuple(row) for row in Appointment.select().order_by(Appointment.id).tuples()]
    return rows, Event.select().count()


HOLDS = f"{BASE}/slots/holds"
SLOTS = f"{BASE}/slots"


def hold_rows() -> list[tuple]:
    """Every slot hold row: what a refused hold request must not change."""
    from shop.models import SlotHold

    return [tuple(row) for row in SlotHold.select().order_by(SlotHold.id).tuples()]


def reason_codes(slot: dict) -> list[str]:
    return [reason["code"] for reason in slot.get("reasons", [])]


def slot_at(envelope: dict, time: str) -> dict:
    """The slot of an envelope that starts at `time`."""
    return next(slot for slot in envelope["data"] if slot["time"] == time)

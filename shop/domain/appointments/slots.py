"""Bookable slots from a tenant's booking settings, and the capacity rule creates share with them.

Appointment dates and times are the shop's wall clock. Minutes since local midnight are used for
all arithmetic inside one day; only "is this slot far enough in the future" crosses to UTC, through
zoneinfo, so DST days are right (02:30 on a spring-forward day does not exist and is not offered).
"""

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from shop import clock
from shop.db import named_sql, run_sql, serialize
from shop.models import Appointment, Tenant
from shop.platform.errors import ApiError
from shop.platform.pagination import paginate_list

ADVISORY_FLAGS = ("disabled", "too_far_ahead", "unknown_tech", "tech_off")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DEFAULTS = {"enabled": True, "slot_minutes": 30, "capacity": 1, "max_days_ahead": 60,
            "min_notice_minutes": 0, "hours": {}, "closed_dates": [], "services": [], "techs": []}


def minutes(hhmm: str) -> int:
    """"09:30" as 570 (minutes since local midnight); "24:00" is accepted as the end of a day."""
    return int(hhmm[:2]) * 60 + int(hhmm[3:5])


def hhmm(total: int) -> str:
    return f"{total // 60:02d}:{total % 60:02d}"


@dataclass
class Booking:
    """A tenant's booking settings (fixture key `booking`) with defaults filled in."""

    enabled: bool
    slot_minutes: int
    capacity: int
    max_days_ahead: int
    min_notice_minutes: int
    hours: dict
    closed_dates: list
    services: list = field(default_factory=list)
    techs: list = field(default_factory=list)

    @classmethod
    def of(cls, settings: dict | None) -> "Booking | None":
        if settings is None:
            return None
        return cls(**{key: settings.get(key, default) for key, default in DEFAULTS.items()})

    def intervals(self, day: date, hours: dict | None = None) -> list[tuple[int, int]]:
        """Open intervals of a day as (start, end) minutes, from `hours` or the shop's hours."""
        spans = (self.hours if hours is None else hours).get(WEEKDAYS[day.weekday()]) or []
        return [(minutes(start), minutes(end)) for start, end in spans]

    def closed_on(self, day: date) -> bool:
        return day.isoformat() in self.closed_dates or not self.intervals(day)

    def service(self, service_id: str) -> dict | None:
        return next((s for s in self.services if s.get("id") == service_id), None)

    def tech(self, tech_id: str) -> dict | None:
        return next((t for t in self.techs if t.get("id") == tech_id), None)


def booking_of(tenant_id: str) -> tuple[Booking | None, ZoneInfo]:
    """The tenant's booking settings and its timezone."""
    query = Tenant.select(Tenant.booking, Tenant.timezone).where(Tenant.id == tenant_id)
    settings, zone = query.tuples().get()
    return Booking.of(settings), ZoneInfo(zone)


class DayLoad:
    """The non-cancelled bookings of one day, for counting overlaps with a window quickly."""

    def __init__(self, spans: list[tuple[int, int]]):
        self.starts = sorted(start for start, _ in spans)
        self.ends = sorted(end for _, end in spans)

    def busy(self, start: int, end: int) -> int:
        """How many bookings overlap [start, end)."""
        # every booking has start < end, so those ending by `start` are among those starting before `end`
        return bisect_left(self.starts, end) - bisect_right(self.ends, start)


# constant SQL prepared once: the slot list reads a whole day of bookings on every call
DAY_BOOKINGS_SQL = named_sql(
    "SELECT scheduled_time, duration_minutes, tech_id FROM appointment "
    "WHERE tenant_id = :tenant AND scheduled_date = :day AND status <> 'cancelled' AND id <> :exclude")


def day_bookings(tenant_id: str, day: date, exclude_id: int | None = None) -> list[tuple]:
    """(start, end, tech_id) of the day's non-cancelled appointments (but `exclude_id`)."""
    params = {"tenant": tenant_id, "day": day.isoformat(), "exclude": exclude_id or 0}
    rows = run_sql(DAY_BOOKINGS_SQL, params)
    return [(minutes(t), minutes(t) + length, tech) for t, length, tech in rows]


def span_remaining(load: DayLoad, start: int, length: int, slot_minutes: int, capacity: int) -> int:
    """Fewest places left over every slot-long window a booking of `length` minutes covers."""
    remaining = capacity
    for window in range(start, start + length, slot_minutes):
        remaining = min(remaining, capacity - load.busy(window, window + slot_minutes))
    return max(remaining, 0)


def has_capacity(tenant_id: str, day: date, time: str, length: int, exclude_id: int | None = None) -> bool:
    """Whether a booking at day/time for `length` minutes fits the shop's per-slot capacity.

    Call inside the write transaction that inserts or moves the booking, so the check and the
    write hold the same lock: SQLite's one writer, or on PostgreSQL a lock on the tenant's day.
    """
    serialize("slot-capacity", tenant_id, day)
    booking, _ = booking_of(tenant_id)
    if booking is None:
        return True
    load = DayLoad([(start, end) for start, end, _ in day_bookings(tenant_id, day, exclude_id)])
    return span_remaining(load, minutes(time), length, booking.slot_minutes, booking.capacity) > 0


def slot_utc(day: date, start: int, zone: ZoneInfo) -> datetime | None:
    """The UTC instant of a wall-clock slot start, or None if that wall time does not exist (DST gap)."""
    local = datetime(day.year, day.month, day.day, start // 60, start % 60, tzinfo=zone)
    instant = local.astimezone(UTC)
    if instant.astimezone(zone).replace(tzinfo=None) != local.replace(tzinfo=None):
        return None
    return instant


def intersect(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The overlap of two lists of intervals."""
    out = [(max(s1, s2), min(e1, e2)) for s1, e1 in a for s2, e2 in b]
    return sorted((s, e) for s, e in out if s < e)


def list_slots(tenant_id: str, day: date, service_id: str | None = None, tech_id: str | None = None,
               limit: int = 100, cursor: str | None = None) -> dict:
    """One page of the slot list of a day, as online booking offers it, with `closed` and every
    advisory flag that applies (flags only on an empty day: each one empties it)."""
    booking, zone = booking_of(tenant_id)
    envelope = {"object": "list", "data": [], "has_more": False, "next_cursor": None, "closed": False}
    service = _echo(envelope, booking, service_id, tech_id)
    intervals = _day_intervals(envelope, booking, day, zone, tech_id)
    slots = []
    if intervals:
        length = service["minutes"] if service else booking.slot_minutes
        slots = _slots(tenant_id, booking, day, zone, intervals, length, tech_id)
    page = paginate_list(slots, "time", Appointment.scheduled_time, limit, cursor)
    envelope.update(data=page.items, has_more=page.has_more, next_cursor=page.next_cursor)
    return envelope


def next_free_slot(tenant_id: str) -> tuple[date, str] | None:
    """The first slot online booking offers from today on, within the booking window (or None)."""
    booking, zone = booking_of(tenant_id)
    if booking is None or not booking.enabled:
        return None
    today = clock.now().replace(tzinfo=UTC).astimezone(zone).date()
    for offset in range(booking.max_days_ahead + 1):
        day = today + timedelta(days=offset)
        intervals = _day_intervals({}, booking, day, zone, None)
        if not intervals:
            continue
        slots = _slots(tenant_id, booking, day, zone, intervals, booking.slot_minutes, None)
        free = next((slot["time"] for slot in slots if slot["available"]), None)
        if free is not None:
            return day, free
    return None


def _echo(envelope: dict, booking: Booking | None, service_id: str | None, tech_id: str | None):
    """Echo `service` and `tech`; an unknown service is 400 invalid_service_id."""
    service = None
    if service_id is not None:
        service = booking.service(service_id) if booking else None
        if service is None and booking is not None:
            raise ApiError(400, "invalid_service_id", f"No service {service_id!r} in the booking settings.",
                           param="service_id")
        envelope["service"] = {"id": service_id, "minutes": service["minutes"] if service else None}
    if tech_id is not None:
        envelope["tech"] = {"id": tech_id}
    return service


def _day_intervals(envelope: dict, booking: Booking | None, day: date, zone: ZoneInfo,
                   tech_id: str | None) -> list[tuple[int, int]]:
    """The day's open intervals (the tech's share of them); [] with every flag that says why."""
    if booking is None or not booking.enabled:
        envelope["disabled"] = True
    if booking is None:
        if tech_id is not None:
            envelope["unknown_tech"] = True  # no settings, no roster
        return []
    envelope["closed"] = booking.closed_on(day)
    today = clock.now().replace(tzinfo=UTC).astimezone(zone).date()
    if (day - today).days > booking.max_days_ahead:
        envelope.update(too_far_ahead=True, max_days=booking.max_days_ahead)
    intervals = booking.intervals(day)
    if tech_id is not None:
        tech = booking.tech(tech_id)
        if tech is None:
            envelope["unknown_tech"] = True
        elif tech.get("hours") is not None:
            own = booking.intervals(day, tech["hours"])
            intervals = intersect(intervals, own)
            if not own or (envelope["closed"] is False and not intervals):
                envelope["tech_off"] = True  # off that weekday, or no hours while the shop is open
    empty = envelope["closed"] or any(envelope.get(flag) for flag in ADVISORY_FLAGS)
    return [] if empty else intervals


def _slots(tenant_id, booking, day, zone, intervals, length, tech_id) -> list[dict]:
    bookings = day_bookings(tenant_id, day)
    shop_load = DayLoad([(s, e) for s, e, _ in bookings])
    tech_load = DayLoad([(s, e) for s, e, tech in bookings if tech == tech_id]) if tech_id else None
    earliest = clock.now().replace(tzinfo=UTC) + timedelta(minutes=booking.min_notice_minutes)
    step = booking.slot_minutes
    slots = []
    for start, end in intervals:
        for slot in range(start, end - step + 1, step):
            instant = slot_utc(day, slot, zone)
            if instant is None:
                continue
            remaining = 0
            if slot + length <= end and instant >= earliest:
                remaining = span_remaining(shop_load, slot, length, step, booking.capacity)
                if tech_load is not None:
                    remaining = min(remaining, span_remaining(tech_load, slot, length, step, 1))
            slots.append({"object": "appointment_slot", "time": hhmm(slot), "available": remaining > 0,
                          "remaining": remaining})
    return slots

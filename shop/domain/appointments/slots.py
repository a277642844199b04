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
from shop.db import lock_name, named_sql, on_postgres, run_sql, run_together, serialize
from shop.models import Appointment, Tenant
from shop.models.appointments import HOLD_MINUTES_DEFAULT
from shop.platform.errors import ApiError
from shop.platform.pagination import paginate_list

ADVISORY_FLAGS = ("disabled", "too_far_ahead", "unknown_tech", "tech_off")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DEFAULTS = {
    "enabled": True,
    "slot_minutes": 30,
    "capacity": 1,
    "max_days_ahead": 60,
    "min_notice_minutes": 0,
    "hours": {},
    "closed_dates": [],
    "services": [],
    "techs": [],
    "hold_minutes": HOLD_MINUTES_DEFAULT,
}


def minutes(hhmm: str) -> int:
    """ "09:30" as 570 (minutes since local midnight); "24:00" is accepted as the end of a day."""
    return int(hhmm[:2]) * 60 + int(hhmm[3:5])


def hhmm(total: int) -> str:
    return f"{total // 60:02d}:{total % 60:02d}"


def service_buffers(service: dict | None) -> dict:
    """The minutes a booking of `service` keeps free before and after itself (settings may predate them)."""
    service = service or {}
    return {
        "buffer_before_minutes": service.get("buffer_before_minutes", 0),
        "buffer_after_minutes": service.get("buffer_after_minutes", 0),
    }


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
    hold_minutes: int = HOLD_MINUTES_DEFAULT

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

    def week_span(self) -> tuple[int, int] | None:
        """From the earliest opening to the latest closing of any weekday (None: never open)."""
        spans = [span for day in WEEKDAYS for span in self.intervals_of(day)]
        return (min(s for s, _ in spans), max(e for _, e in spans)) if spans else None

    def intervals_of(self, weekday: str) -> list[tuple[int, int]]:
        return [(minutes(start), minutes(end)) for start, end in self.hours.get(weekday) or []]

    def service(self, service_id: str) -> dict | None:
        return next((s for s in self.services if s.get("id") == service_id), None)

    def tech(self, tech_id: str) -> dict | None:
        return next((t for t in self.techs if t.get("id") == tech_id), None)


BOOKING_SQL = named_sql("SELECT booking, timezone FROM tenant WHERE id = :tenant")
# PostgreSQL: the day's lock taken by the statement that reads the settings (locked_day)
LOCKED_BOOKING_SQL = named_sql(
    "SELECT booking, timezone, pg_advisory_xact_lock(hashtextextended(:lock, 0)) "
    "FROM tenant WHERE id = :tenant"
)


def booking_of(tenant_id: str) -> tuple[Booking | None, ZoneInfo]:
    """The tenant's booking settings and its timezone."""
    return _booking(run_sql(BOOKING_SQL, {"tenant": tenant_id}))


def locked_day(
    tenant_id: str, day: date, exclude_id: int | None = None, exclude_hold: str | None = None
) -> tuple[Booking | None, list[tuple]]:
    """lock_day, then the tenant's booking settings and day_taken (none without settings): on
    PostgreSQL one round trip, the lock and the settings in one statement, the day read by the next
    one, so after the lock is held."""
    if not on_postgres():
        lock_day(tenant_id, day)
        booking, _ = booking_of(tenant_id)
        return booking, (day_taken(tenant_id, day, exclude_id, exclude_hold) if booking else [])
    settings, taken = run_together(
        (LOCKED_BOOKING_SQL, {"tenant": tenant_id, "lock": lock_name("slot-capacity", tenant_id, day)}),
        (DAY_TAKEN_SQL, _day_taken_params(tenant_id, day, exclude_id, exclude_hold)),
    )
    booking, _ = _booking(settings)
    return booking, (_spans(taken) if booking else [])


def booking_and_day(tenant_id: str, day: date) -> tuple[Booking | None, ZoneInfo, list[tuple] | None]:
    """booking_of, and on PostgreSQL day_taken too, in the same round trip (None: not read yet)."""
    if not on_postgres():  # no round trip to save: the day is read when it is needed
        return (*booking_of(tenant_id), None)
    settings, taken = run_together(
        (BOOKING_SQL, {"tenant": tenant_id}), (DAY_TAKEN_SQL, _day_taken_params(tenant_id, day, None, None))
    )
    return (*_booking(settings), _spans(taken))


def _booking(rows: list) -> tuple[Booking | None, ZoneInfo]:
    if not rows:
        raise Tenant.DoesNotExist("no such tenant")
    settings, zone = rows[0][:2]
    return Booking.of(Tenant.booking.python_value(settings)), ZoneInfo(zone)


class DayLoad:
    """Intervals of one day (bookings or holds), for counting overlaps with a window quickly."""

    def __init__(self, spans: list[tuple[int, int]]):
        self.starts = sorted(start for start, _ in spans)
        self.ends = sorted(end for _, end in spans)

    def busy(self, start: int, end: int) -> int:
        """How many intervals overlap [start, end)."""
        # every interval has start < end, so those ending by `start` are among those starting before `end`
        return bisect_left(self.starts, end) - bisect_right(self.ends, start)


@dataclass(frozen=True)
class Span:
    """What a booking or hold would take: `length` minutes from a start, and its buffers around it."""

    length: int
    before: int = 0
    after: int = 0
    tech_id: str | None = None

    def windows(self, start: int, step: int) -> list[tuple[int, int]]:
        """The slot-long windows the span covers, then its buffers cut in slot-long pieces.

        Without buffers these are exactly the windows capacity has always been counted in.
        """
        out = [(w, w + step) for w in range(start, start + self.length, step)]
        out += [(max(w - step, start - self.before), w) for w in range(start, start - self.before, -step)]
        end = start + self.length
        out += [(w, min(w + step, end + self.after)) for w in range(end, end + self.after, step)]
        return out


@dataclass
class Taken:
    """One day's bookings and live holds, each as its own span and as the span with its buffers."""

    booked: DayLoad
    held: DayLoad
    booked_plain: DayLoad | None = None
    held_plain: DayLoad | None = None

    @classmethod
    def of(cls, rows: list[tuple], plain: bool = False) -> "Taken":
        """From (start, end, tech, before, after, is_hold) rows; `plain` also keeps unbuffered loads."""
        loads = [[(s - b, e + a) for s, e, _, b, a, hold in rows if hold == want] for want in (0, 1)]
        taken = cls(DayLoad(loads[0]), DayLoad(loads[1]))
        if plain:
            taken.booked_plain = DayLoad([(s, e) for s, e, _, _, _, hold in rows if not hold])
            taken.held_plain = DayLoad([(s, e) for s, e, _, _, _, hold in rows if hold])
        return taken

    def remaining(self, span: Span, start: int, step: int, capacity: int) -> int:
        """Fewest places left over every window the span and its buffers cover."""
        worst = max((self.booked.busy(*w) + self.held.busy(*w) for w in span.windows(start, step)), default=0)
        return max(capacity - worst, 0)

    def worst(self, windows: list[tuple[int, int]], plain: bool) -> tuple[int, int]:
        """(booked, held) in the fullest of `windows`."""
        booked, held = (self.booked_plain, self.held_plain) if plain else (self.booked, self.held)
        counts = [(booked.busy(*w), held.busy(*w)) for w in windows] or [(0, 0)]
        return max(counts, key=lambda pair: (pair[0] + pair[1], pair[0]))


# constant SQL prepared once: the slot list reads a whole day of bookings and live holds on every call
DAY_TAKEN_SQL = named_sql(
    "SELECT scheduled_time, duration_minutes, tech_id, buffer_before_minutes, buffer_after_minutes, 0 "
    "FROM appointment "
    "WHERE tenant_id = :tenant AND scheduled_date = :day AND status <> 'cancelled' AND id <> :exclude "
    "UNION ALL "
    "SELECT scheduled_time, duration_minutes, tech_id, buffer_before_minutes, buffer_after_minutes, 1 "
    "FROM slot_hold "
    "WHERE tenant_id = :tenant AND scheduled_date = :day AND status = 'active' AND expires_at > :now "
    "AND id <> :exclude_hold"
)


def day_taken(
    tenant_id: str, day: date, exclude_id: int | None = None, exclude_hold: str | None = None
) -> list[tuple]:
    """(start, end, tech_id, before, after, is_hold) of the day's non-cancelled appointments and live
    holds (but `exclude_id` and `exclude_hold`); an expired hold simply no longer matches."""
    return _spans(run_sql(DAY_TAKEN_SQL, _day_taken_params(tenant_id, day, exclude_id, exclude_hold)))


def _day_taken_params(tenant_id: str, day: date, exclude_id: int | None, exclude_hold: str | None) -> dict:
    return {
        "tenant": tenant_id,
        "day": day.isoformat(),
        "exclude": exclude_id or 0,
        "now": clock.now(),
        "exclude_hold": exclude_hold or "",
    }


def _spans(rows: list) -> list[tuple]:
    return [
        (minutes(t), minutes(t) + length, tech, before, after, hold)
        for t, length, tech, before, after, hold in rows
    ]


def lock_day(tenant_id: str, day: date) -> None:
    """Inside the write transaction of a booking or hold: no other one may change this tenant's day.

    On SQLite the write transaction (BEGIN IMMEDIATE) already excludes every other writer; on
    PostgreSQL a transaction-scoped advisory lock on (tenant, day) serialises bookings and holds.
    """
    serialize("slot-capacity", tenant_id, day)


def has_capacity(
    tenant_id: str,
    day: date,
    time: str,
    span: Span,
    exclude_id: int | None = None,
    exclude_hold: str | None = None,
) -> bool:
    """Whether a booking or hold at day/time fits the shop's per-slot capacity (and its tech's calendar).

    Call inside the write transaction that inserts or moves it, so the check and the write hold
    the same lock. Live holds count like bookings; buffers on either side keep their minutes.
    """
    booking, rows = locked_day(tenant_id, day, exclude_id, exclude_hold)
    if booking is None:
        return True
    start, step = minutes(time), booking.slot_minutes
    if Taken.of(rows).remaining(span, start, step, booking.capacity) <= 0:
        return False
    if span.tech_id is None:
        return True
    return Taken.of([r for r in rows if r[2] == span.tech_id]).remaining(span, start, step, 1) > 0


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


def grid(intervals: list[tuple[int, int]], step: int) -> list[int]:
    """Slot starts: every `step` minutes from each interval's start while a slot still fits in it."""
    return [slot for start, end in intervals for slot in range(start, end - step + 1, step)]


def local_today(zone: ZoneInfo) -> date:
    return clock.now().replace(tzinfo=UTC).astimezone(zone).date()


def list_slots(
    tenant_id: str,
    day: date,
    service_id: str | None = None,
    tech_id: str | None = None,
    limit: int = 100,
    cursor: str | None = None,
    explain: bool = False,
) -> dict:
    """One page of the slot list of a day, as online booking offers it, with `closed` and every
    advisory flag that applies (flags only on an empty day: each one empties it). With `explain`,
    every unavailable slot says why, and the slots a day-wide rule removes are listed to say so."""
    booking, zone, rows = booking_and_day(tenant_id, day)
    envelope = {"object": "list", "data": [], "has_more": False, "next_cursor": None, "closed": False}
    service = _echo(envelope, booking, service_id, tech_id)
    intervals = _day_intervals(envelope, booking, day, zone, tech_id)
    slots = []
    if booking is not None:
        span = Span(
            service["minutes"] if service else booking.slot_minutes, tech_id=tech_id, **_buffer_args(service)
        )
        if explain and not (envelope.get("disabled") or envelope.get("unknown_tech")):
            slots = DayPlan(tenant_id, booking, day, zone, span, plain=True, rows=rows).explained()
        elif intervals:
            slots = DayPlan(tenant_id, booking, day, zone, span, rows=rows).offered(intervals)
    page = paginate_list(slots, "time", Appointment.scheduled_time, limit, cursor)
    envelope.update(data=page.items, has_more=page.has_more, next_cursor=page.next_cursor)
    return envelope


def _buffer_args(service: dict | None) -> dict:
    buffers = service_buffers(service)
    return {"before": buffers["buffer_before_minutes"], "after": buffers["buffer_after_minutes"]}


def span_of(booking: Booking, service_id: str | None, length: int | None, tech_id: str | None) -> Span:
    """The span a booking or hold of a service (or of `length` minutes, or one slot) takes."""
    service = booking.service(service_id) if service_id else None
    length = length or (service["minutes"] if service else booking.slot_minutes)
    return Span(length, tech_id=tech_id, **_buffer_args(service))


class SlotTaken(Exception):
    """A booking or hold refused for want of a place: raised inside the write transaction, turned into
    the 409 (with where to go instead) once the transaction has let go of its lock."""

    def __init__(self, day: date, time: str, span: Span, reasons: list[dict] | None = None):
        super().__init__(f"{day.isoformat()} {time} has no place left for {span.length} minutes.")
        self.day, self.time, self.span, self.reasons = day, time, span, reasons

    def answer(self, tenant_id: str, param: str = "scheduled_time") -> ApiError:
        """409 slot_unavailable with `details.next_available` (and the reasons, when worked out)."""
        details = {"next_available": next_available(tenant_id, self.day, self.time, self.span)}
        if self.reasons is not None:
            details = {"reasons": self.reasons, **details}
        return ApiError(409, "slot_unavailable", str(self), param=param, details=details)


def next_free_slot(tenant_id: str) -> tuple[date, str] | None:
    """The first slot online booking offers from today on, within the booking window (or None)."""
    booking, zone = booking_of(tenant_id)
    if booking is None or not booking.enabled:
        return None
    found = free_starts(tenant_id, booking, zone, local_today(zone), -1, Span(booking.slot_minutes), 1)
    return (date.fromisoformat(found[0]["date"]), found[0]["time"]) if found else None


def next_available(tenant_id: str, day: date, time: str, span: Span, count: int = 3) -> list[dict]:
    """Up to `count` free starts for `span` after day/time: later that day, then the following open
    days up to the end of the booking window (what a refused booking or hold is offered instead)."""
    booking, zone = booking_of(tenant_id)
    if booking is None or not booking.enabled:
        return []
    today = local_today(zone)
    after = minutes(time) if day >= today else -1
    return free_starts(tenant_id, booking, zone, max(day, today), after, span, count)


def free_starts(
    tenant_id: str, booking: Booking, zone: ZoneInfo, first: date, after: int, span: Span, count: int
) -> list[dict]:
    """The first `count` offered starts from `first` (later than `after` minutes on that day)."""
    found = []
    last = local_today(zone) + timedelta(days=booking.max_days_ahead)
    day = first
    while day <= last and len(found) < count:
        intervals = _day_intervals({}, booking, day, zone, span.tech_id)
        if intervals:
            for slot in DayPlan(tenant_id, booking, day, zone, span).offered(intervals):
                if slot["available"] and (day != first or minutes(slot["time"]) > after):
                    found.append({"date": day.isoformat(), "time": slot["time"]})
        day += timedelta(days=1)
    return found[:count]


def _echo(envelope: dict, booking: Booking | None, service_id: str | None, tech_id: str | None):
    """Echo `service` and `tech`; an unknown service is 400 invalid_service_id."""
    service = None
    if service_id is not None:
        service = booking.service(service_id) if booking else None
        if service is None and booking is not None:
            raise ApiError(
                400,
                "invalid_service_id",
                f"No service {service_id!r} in the booking settings.",
                param="service_id",
            )
        envelope["service"] = {"id": service_id, "minutes": service["minutes"] if service else None}
    if tech_id is not None:
        envelope["tech"] = {"id": tech_id}
    return service


def _day_intervals(
    envelope: dict, booking: Booking | None, day: date, zone: ZoneInfo, tech_id: str | None
) -> list[tuple[int, int]]:
    """The day's open intervals (the tech's share of them); [] with every flag that says why."""
    if booking is None or not booking.enabled:
        envelope["disabled"] = True
    if booking is None:
        if tech_id is not None:
            envelope["unknown_tech"] = True  # no settings, no roster
        return []
    envelope["closed"] = booking.closed_on(day)
    if (day - local_today(zone)).days > booking.max_days_ahead:
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


class DayPlan:
    """One day of one tenant for one span: what is taken, and what that leaves for each start."""

    def __init__(
        self,
        tenant_id: str,
        booking: Booking,
        day: date,
        zone: ZoneInfo,
        span: Span,
        plain: bool = False,
        exclude_hold: str | None = None,
        rows: list[tuple] | None = None,
    ):
        self.booking, self.day, self.zone, self.span = booking, day, zone, span
        if rows is None:  # else day_taken's rows, read already (booking_and_day)
            rows = day_taken(tenant_id, day, exclude_hold=exclude_hold)
        self.shop = Taken.of(rows, plain)
        self.tech = Taken.of([r for r in rows if r[2] == span.tech_id], plain) if span.tech_id else None
        self.earliest = clock.now().replace(tzinfo=UTC) + timedelta(minutes=booking.min_notice_minutes)

    def remaining(self, start: int) -> int:
        """Places left for the span at `start`, ignoring hours and notice."""
        step = self.booking.slot_minutes
        left = self.shop.remaining(self.span, start, step, self.booking.capacity)
        if self.tech is not None:
            left = min(left, self.tech.remaining(self.span, start, step, 1))
        return left

    def offered(self, intervals: list[tuple[int, int]]) -> list[dict]:
        """The slots of the open intervals, as the slot list has always given them."""
        slots = []
        for start, end in intervals:
            for slot in range(start, end - self.booking.slot_minutes + 1, self.booking.slot_minutes):
                instant = slot_utc(self.day, slot, self.zone)
                if instant is None:
                    continue
                remaining = 0
                if slot + self.span.length <= end and instant >= self.earliest:
                    remaining = self.remaining(slot)
                slots.append(
                    {
                        "object": "appointment_slot",
                        "time": hhmm(slot),
                        "available": remaining > 0,
                        "remaining": remaining,
                    }
                )
        return slots

    def explained(self) -> list[dict]:
        """Every start of the day's grid with its reasons; one with none is available."""
        slots = []
        for slot in self._explain_grid():
            instant = slot_utc(self.day, slot, self.zone)
            if instant is None:
                continue  # a wall time the DST change skips does not exist
            reasons = self.day_reasons() + self.reasons(slot, instant)
            remaining = 0 if reasons else self.remaining(slot)
            slots.append(
                {
                    "object": "appointment_slot",
                    "time": hhmm(slot),
                    "available": not reasons,
                    "remaining": remaining,
                    "reasons": reasons,
                }
            )
        return slots

    def _explain_grid(self) -> list[int]:
        step, booking = self.booking.slot_minutes, self.booking
        own = booking.intervals(self.day)
        week = booking.week_span()
        times = set(grid(own, step)) | set(grid([week] if week else [], step))
        if self.span.tech_id and (tech := booking.tech(self.span.tech_id)) and tech.get("hours") is not None:
            times |= set(grid(intersect(own, booking.intervals(self.day, tech["hours"])), step))
        return sorted(times)

    def day_reasons(self) -> list[dict]:
        """What closes the whole day: its weekday, its date, or the end of the booking window."""
        reasons = []
        if not self.booking.intervals(self.day):
            reasons.append({"code": "closed_day"})
        if self.day.isoformat() in self.booking.closed_dates:
            reasons.append({"code": "closed_date"})
        if (self.day - local_today(self.zone)).days > self.booking.max_days_ahead:
            reasons.append({"code": "too_far_ahead", "max_days": self.booking.max_days_ahead})
        return reasons

    def reasons(self, start: int, instant: datetime) -> list[dict]:
        """Why the span cannot start at `start` this day (hours, tech, notice, capacity); [] if it can."""
        reasons = self._hour_reasons(start)
        if instant < self.earliest:
            reasons.append({"code": "min_notice", "min_notice_minutes": self.booking.min_notice_minutes})
        reasons += self._taken_reasons(self.shop, start, self.booking.capacity, "full")
        if self.tech is not None:
            reasons += self._taken_reasons(self.tech, start, 1, "tech_busy")
        return reasons

    def _hour_reasons(self, start: int) -> list[dict]:
        """outside_hours / span_crosses_break against the shop's hours, tech_off against the tech's."""
        end, reasons = start + self.span.length, []
        shop = self.booking.intervals(self.day)
        inside = next(((s, e) for s, e in shop if s <= start < e), None)
        if shop and inside is None:
            reasons.append({"code": "outside_hours"})
        elif inside is not None and end > inside[1]:
            later = any(s >= inside[1] for s, _ in shop)
            reasons.append({"code": "span_crosses_break" if later else "outside_hours"})
        tech = self.booking.tech(self.span.tech_id) if self.span.tech_id else None
        if tech is not None and tech.get("hours") is not None:
            own = self.booking.intervals(self.day, tech["hours"])
            if not any(s <= start and end <= e for s, e in own):
                reasons.append({"code": "tech_off", "tech_id": self.span.tech_id})
        return reasons

    def _taken_reasons(self, taken: Taken, start: int, capacity: int, code: str) -> list[dict]:
        """full/held (tech_busy for a tech) when the span itself finds no place; buffer when only
        the buffers (its own or its neighbours') do not fit."""
        step = self.booking.slot_minutes
        if taken.remaining(self.span, start, step, capacity) > 0:
            return []
        booked, held = taken.worst(Span(self.span.length).windows(start, step), plain=True)
        if booked + held >= capacity:
            kind = code if code == "tech_busy" or booked >= capacity else "held"
        else:
            kind = "buffer"
            booked, held = taken.worst(self.span.windows(start, step), plain=False)
        reason = {"code": kind, "booked": booked, "held": held, "capacity": capacity}
        if code == "tech_busy":
            reason["tech_id"] = self.span.tech_id
        return [reason]

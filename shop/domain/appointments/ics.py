"""A calendar feed's body: RFC 5545 text made with the `icalendar` library.

One VEVENT per appointment: `UID` appointment-<id>-<shop>@repair-shop-service (never changes),
`SEQUENCE` the appointment's sequence, `STATUS` CANCELLED for a cancelled one (kept, so subscribed
calendars drop or strike it instead of keeping a stale event), times with the shop's `TZID` and a
`VTIMEZONE` the library builds from the zone database. Never the customer's phone, email or the
staff notes; the customer's name only when the feed does not hide it.
"""

import threading
from collections import OrderedDict
from datetime import UTC, datetime, timedelta

from icalendar import Calendar, Event, vDuration

from shop.domain.appointments.feeds import (
    REFRESH_MINUTES,
    FeedRequest,
    clean_text,
    feed_appointments,
    local_start,
)
from shop.models import Appointment

PRODID = "-//Repair-Shop Service//Calendar feed 1//EN"
UID_DOMAIN = "repair-shop-service"
# RFC 5545 has three event statuses; the appointment's own status is in the description
EVENT_STATUS = {"pending": "TENTATIVE", "scheduled": "TENTATIVE", "cancelled": "CANCELLED"}
SUMMARY_PREFIX = {"cancelled": "Cancelled: ", "no_show": "No-show: ", "completed": "Done: "}


def event_uid(tenant_id: str, appointment_id: int) -> str:
    """The event's UID: the same for the appointment's whole life, in every feed that shows it."""
    return f"appointment-{appointment_id}-{tenant_id}@{UID_DOMAIN}"


class BodyCache:
    """The last body of each feed in this process, under the ETag it was built for, bounded in bytes.

    The ETag covers everything the body is made of, so a body under the same ETag is the same body:
    a client that polls without If-None-Match (Google Calendar does) gets it without a rebuild.
    """

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._bodies: OrderedDict[str, tuple[str, bytes]] = OrderedDict()
        self._size = 0

    def get(self, feed_id: str, etag: str) -> bytes | None:
        with self._lock:
            found = self._bodies.get(feed_id)
            if found is None or found[0] != etag:
                return None
            self._bodies.move_to_end(feed_id)
            return found[1]

    def put(self, feed_id: str, etag: str, body: bytes) -> None:
        if len(body) > self.max_bytes:
            return
        with self._lock:
            old = self._bodies.pop(feed_id, None)
            self._size -= len(old[1]) if old else 0
            self._bodies[feed_id] = (etag, body)
            self._size += len(body)
            while self._size > self.max_bytes:
                _, (_, dropped) = self._bodies.popitem(last=False)
                self._size -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._bodies.clear()
            self._size = 0


# a 2,000-appointment feed is about 1 MB: a few busy feeds per process
bodies = BodyCache(max_bytes=16 * 1024 * 1024)


def feed_body(opened: FeedRequest, root: str, etag: str) -> bytes:
    """The feed's body for this ETag: this process's last one when it is current, else built anew."""
    body = bodies.get(opened.feed.id, etag)
    if body is None:
        body = render_feed(opened, root)
        bodies.put(opened.feed.id, etag, body)
    return body


def render_feed(opened: FeedRequest, root: str) -> bytes:
    """The whole VCALENDAR of a feed, as bytes (CRLF lines, folded at 75 octets by the library)."""
    calendar = Calendar()
    name = clean_text(opened.tenant.name) + " appointments"
    if opened.feed.tech_id is not None:
        name += f" ({clean_text(opened.feed.tech_id)})"
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    calendar.add("name", name)
    calendar.add("x-wr-calname", name)
    calendar.add("x-wr-timezone", opened.zone.key)
    # RFC 7986's refresh interval, and the older name Outlook and Apple Calendar read
    calendar.add(
        "refresh-interval", vDuration(timedelta(minutes=REFRESH_MINUTES)), parameters={"VALUE": "DURATION"}
    )
    calendar.add("x-published-ttl", f"PT{REFRESH_MINUTES}M")
    for appointment in feed_appointments(opened):
        calendar.add_component(_event(appointment, opened, root))
    # the zone's rules over the window only (a year on each side): the whole zone history is kilobytes
    calendar.add_missing_timezones(opened.first - timedelta(days=366), opened.last + timedelta(days=366))
    return calendar.to_ical()


def _event(appointment: Appointment, opened: FeedRequest, root: str) -> Event:
    start = local_start(appointment, opened.zone)
    # the end is the start plus real minutes (a job over a DST change still lasts its minutes)
    end = (start.astimezone(UTC) + timedelta(minutes=appointment.duration_minutes)).astimezone(opened.zone)
    if _ambiguous(end):  # the second 01:30 of a fall-back night: written in UTC, which says which one
        end = end.astimezone(UTC)
    changed = _last_change(appointment)
    event = Event()
    event.add("uid", event_uid(opened.tenant.id, appointment.id))
    event.add("dtstamp", changed)
    event.add("last-modified", changed)
    event.add("sequence", appointment.sequence or 0)
    event.add("dtstart", start)
    event.add("dtend", end)
    event.add("summary", _summary(appointment, opened.feed.hide_customer_names))
    event.add("description", _description(appointment))
    event.add("status", EVENT_STATUS.get(appointment.status, "CONFIRMED"))
    if appointment.status == "cancelled":
        event.add("transp", "TRANSPARENT")  # no longer blocks the time (OPAQUE is the default)
    day = start.date().isoformat()
    event.add("url", f"{root}/console/calendar?week={day}#appointment-{appointment.id}")
    return event


def _ambiguous(moment: datetime) -> bool:
    """A wall time that happens twice (RFC 5545 would read a TZID time as the first of the two)."""
    return moment.replace(fold=1 - moment.fold).utcoffset() != moment.utcoffset()


def _last_change(appointment: Appointment) -> datetime:
    """When the appointment last changed, as far as the store records it (aware UTC)."""
    stamps = [appointment.created_at, appointment.updated_at, appointment.cancelled_at]
    return max(stamp for stamp in stamps if stamp is not None).replace(tzinfo=UTC)


def _summary(appointment: Appointment, hide_names: bool) -> str:
    """`Ann Lee: Screen repair`, or `Appointment: Screen repair` when names are hidden."""
    who = "Appointment" if hide_names else clean_text(appointment.customer_name) or "Appointment"
    what = clean_text(appointment.service_description)
    prefix = SUMMARY_PREFIX.get(appointment.status, "")
    return f"{prefix}{who}: {what}" if what else f"{prefix}{who}"


def _description(appointment: Appointment) -> str:
    """The appointment's number, status, service and tech: never its phone, email or notes (nor its
    ticket, which may be hidden from the public surface)."""
    lines = [f"Appointment {appointment.id} ({appointment.status.replace('_', ' ')})"]
    if appointment.service_description:
        lines.append("Service: " + clean_text(appointment.service_description))
    if appointment.tech_id:
        lines.append("Tech: " + clean_text(appointment.tech_id))
    if appointment.status == "cancelled" and appointment.cancellation_reason:
        lines.append("Cancelled: " + clean_text(appointment.cancellation_reason)[:500])
    return "\n".join(lines)

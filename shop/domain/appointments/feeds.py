"""Calendar feeds: secret-token iCalendar (RFC 5545) subscriptions of a shop's or a tech's appointments.

A feed's URL holds a random token; only its SHA-256 is stored, so the URL is shown once (in the
create answer) and a leaked one is revoked, never read back. Every appointment from 30 days back
to the end of the booking window is one VEVENT whose UID never changes and whose SEQUENCE is the
appointment's `sequence` (raised by `raise_sequence` on every change of date, time, duration or
status), so subscribed calendars replace an event instead of adding a second one.

The ETag is a digest of what the body is made of (the feed's settings, the window, and each
appointment's id, sequence and last change), read with one narrow query; an unchanged feed is
answered 304 without building the calendar.
"""

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from shop import clock
from shop.db import locked, named_sql, run_sql, write_sql, write_transaction
from shop.domain.actor import Actor
from shop.domain.appointments.slots import booking_of, local_today
from shop.models import Appointment, CalendarFeed, Tenant
from shop.models.calendar_feeds import CALENDAR_FEED_ID_PATTERN
from shop.platform.errors import ApiError, not_found
from shop.platform.pagination import paginate

# the fields whose change a subscribed calendar must take as a new version of the event
CALENDAR_FIELDS = frozenset(("scheduled_date", "scheduled_time", "duration_minutes", "status"))
PAST_DAYS = 30
DEFAULT_WINDOW_DAYS = 60  # ahead, for a shop without booking settings (the settings' default)
REFRESH_MINUTES = 15
# last_fetched_at is written at most this often per feed: a poll is a read, not a write
FETCH_STAMP_SECONDS = 60
# raise when the body's shape changes, so every client fetches the new one
FEED_FORMAT = "1"
FEED_ID = re.compile(CALENDAR_FEED_ID_PATTERN.replace("$", r"\Z"))
TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")
ORDER = [(CalendarFeed.created_at, True), (CalendarFeed.id, True)]
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def raise_sequence(appointment: Appointment, changed=CALENDAR_FIELDS) -> None:
    """Before saving an appointment: a new iCalendar SEQUENCE when `changed` (the names of the fields
    that changed; all of them by default) touches date, time, duration or status. The appointment is
    locked by the transaction that changes it, so the increment cannot be lost to another writer."""
    if CALENDAR_FIELDS.intersection(changed):
        appointment.sequence = (appointment.sequence or 0) + 1


def hash_feed_token(token: str) -> str:
    """The stored form of a feed token: its SHA-256 hex digest."""
    return hashlib.sha256(token.encode()).hexdigest()


def feed_url(root: str, token: str) -> str:
    """The feed's absolute address on the service's public root (SHOP_PUBLIC_URL, else the request's)."""
    return f"{root.rstrip('/')}/calendar/{token}.ics"


def webcal_url(url: str) -> str:
    """The same address as a webcal:// link, which calendar apps open as a subscription."""
    return re.sub(r"^https?://", "webcal://", url)


def _roster_tech(tenant_id: str, tech_id: str | None) -> None:
    if tech_id is None:
        return
    booking, _ = booking_of(tenant_id)
    if booking is None or booking.tech(tech_id) is None:
        raise ApiError(400, "invalid_field", f"No tech {tech_id!r} on the roster.", param="tech_id")


def create_feed(tenant_id: str, body: dict, actor: Actor, root: str) -> CalendarFeed:
    """A new feed of the shop (or of one roster tech); its `url` is on this answer only."""
    _roster_tech(tenant_id, body.get("tech_id"))
    token = secrets.token_urlsafe(32)
    with write_transaction():
        feed = CalendarFeed.create(
            id="calfeed_" + secrets.token_hex(12),
            tenant=tenant_id,
            token_hash=hash_feed_token(token),
            tech_id=body.get("tech_id"),
            hide_customer_names=body.get("hide_customer_names", False),
            description=body.get("description"),
            created_by=actor.name[:320],
            created_at=clock.now(),
        )
    feed.url = feed_url(root, token)
    return feed


def live_feeds(tenant_id: str):
    """The tenant's feeds that have not been revoked."""
    return CalendarFeed.for_tenant(tenant_id).where(CalendarFeed.revoked_at.is_null())


def list_feeds(tenant_id: str, limit: int, cursor: str | None) -> dict:
    """One page of the tenant's live feeds, newest first (never their URLs)."""
    return paginate(live_feeds(tenant_id), ORDER, limit, cursor).envelope()


def find_feed(tenant_id: str, feed_id: str) -> CalendarFeed:
    """A live feed of this tenant, locked for the transaction, else 404 (another tenant's is as missing)."""
    found = None
    if FEED_ID.fullmatch(feed_id):  # anything else is no feed of ours (nor a NUL to the database)
        found = locked(live_feeds(tenant_id).where(CalendarFeed.id == feed_id)).first()
    if found is None:
        raise not_found("calendar feed", feed_id)
    return found


def revoke_feed(tenant_id: str, feed_id: str, actor: Actor) -> dict:
    """Revoke a feed: its URL answers 404 from now on, and it leaves the list."""
    with write_transaction():
        feed = find_feed(tenant_id, feed_id)
        CalendarFeed.update(revoked_at=clock.now(), revoked_by=actor.name[:320]).where(
            CalendarFeed.id == feed.id
        ).execute()
    return {"object": "calendar_feed", "id": feed.id, "deleted": True}


FEED_BY_TOKEN_SQL = named_sql(
    f"SELECT {CalendarFeed.columns('f')}, {Tenant.columns('t')} FROM calendar_feed AS f "
    "JOIN tenant AS t ON t.id = f.tenant_id WHERE f.token_hash = :digest AND f.revoked_at IS NULL"
)
STAMP_FETCH_SQL = named_sql("UPDATE calendar_feed SET last_fetched_at = :now WHERE id = :id")
# what the body is made of, per appointment: the ETag's input (the window's index range)
VERSIONS_SQL = named_sql(
    "SELECT id, sequence, updated_at, cancelled_at FROM appointment WHERE tenant_id = :tenant "
    "AND scheduled_date >= :first AND scheduled_date <= :last ORDER BY id"
)
TECH_VERSIONS_SQL = named_sql(
    "SELECT id, sequence, updated_at, cancelled_at FROM appointment WHERE tenant_id = :tenant "
    "AND scheduled_date >= :first AND scheduled_date <= :last AND tech_id = :tech ORDER BY id"
)


@dataclass
class FeedRequest:
    """A feed found by its token, with its shop and the window of days it shows."""

    feed: CalendarFeed
    tenant: Tenant
    zone: ZoneInfo
    first: date
    last: date


def open_feed(token: str) -> FeedRequest | None:
    """The live feed with this token and its window, or None (unknown or revoked)."""
    if not TOKEN.fullmatch(token):
        return None
    digest = hash_feed_token(token)
    rows = run_sql(FEED_BY_TOKEN_SQL, {"digest": digest})
    if not rows:
        return None
    split = len(CalendarFeed._meta.sorted_fields)
    feed, tenant = CalendarFeed.from_row(rows[0][:split]), Tenant.from_row(rows[0][split:])
    if not hmac.compare_digest(feed.token_hash, digest):
        return None
    booking, zone = booking_of(tenant.id)
    today = local_today(zone)
    ahead = booking.max_days_ahead if booking is not None else DEFAULT_WINDOW_DAYS
    return FeedRequest(feed, tenant, zone, today - timedelta(days=PAST_DAYS), today + timedelta(days=ahead))


def note_fetch(feed: CalendarFeed) -> None:
    """Stamp last_fetched_at, at most once a minute per feed (a poll must not cost a write each time)."""
    now = clock.now()
    if feed.last_fetched_at is None or (now - feed.last_fetched_at).total_seconds() >= FETCH_STAMP_SECONDS:
        write_sql(STAMP_FETCH_SQL, {"now": now, "id": feed.id})


def feed_etag(opened: FeedRequest, root: str) -> str:
    """A strong ETag of the body: the feed's settings, the window and every event's version."""
    feed, tenant = opened.feed, opened.tenant
    params = {"tenant": tenant.id, "first": opened.first, "last": opened.last}
    if feed.tech_id is None:
        rows = run_sql(VERSIONS_SQL, params)
    else:
        rows = run_sql(TECH_VERSIONS_SQL, {**params, "tech": feed.tech_id})
    digest = hashlib.sha256()
    header = (
        FEED_FORMAT,
        feed.id,
        feed.tech_id,
        feed.hide_customer_names,
        tenant.name,
        tenant.timezone,
        root,
    )
    digest.update(repr((header, opened.first, opened.last)).encode())
    for row in rows:
        digest.update(repr(tuple(row)).encode())
    return '"' + digest.hexdigest()[:32] + '"'


def feed_appointments(opened: FeedRequest) -> list[Appointment]:
    """The appointments the feed shows, in calendar order."""
    a = Appointment
    query = a.for_tenant(opened.tenant.id).where(
        (a.scheduled_date >= opened.first) & (a.scheduled_date <= opened.last)
    )
    if opened.feed.tech_id is not None:
        query = query.where(a.tech_id == opened.feed.tech_id)
    return list(query.order_by(a.scheduled_date, a.scheduled_time, a.id))


def clean_text(value: str | None) -> str:
    """Text for a calendar property: control characters dropped (line breaks are the library's job)."""
    return CONTROL.sub("", value or "")


def local_start(appointment: Appointment, zone: ZoneInfo) -> datetime:
    """The appointment's start as an aware datetime in the shop's zone."""
    day = appointment.scheduled_date
    if not isinstance(day, date):
        day = date.fromisoformat(str(day))
    hour, minute = int(appointment.scheduled_time[:2]), int(appointment.scheduled_time[3:5])
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone)

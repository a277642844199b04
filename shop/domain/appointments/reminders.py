"""Reminders, customer messages and staff notices of appointments (issue 25).

Every appointment change calls one of the `on_*` functions inside its own write transaction, so
the rows (and the messages they queue) commit or roll back with the change. A reminder's time is
the appointment's start instant (the shop's wall clock in its time zone, DST-correct) minus
`before_minutes` real minutes, moved to the minute before the shop's quiet hours when it falls in
them. The job (`claim_due`) claims a due row, re-checks the appointment in the same transaction and
queues its message in the send pipeline: one row, one message, whatever the number of consumers;
after the commit the same job hands the messages it queued to their provider (tasks/reminders.py).
"""

import secrets
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from shop import clock, queue
from shop.db import backend, locked, named_sql, read_ahead, run_sql, write_transaction
from shop.domain.actor import Actor
from shop.domain.appointments import texts
from shop.domain.messaging.conversations import conversation_for_customer
from shop.domain.messaging.sending import CONVERSATION_SQL, EMAIL, PHONE, normalise_address, sender_for
from shop.models import (
    Appointment,
    AppointmentReminder,
    Conversation,
    Customer,
    Message,
    Notification,
    Tenant,
)
from shop.models.appointments import TERMINAL_STATUSES
from shop.platform.errors import not_found
from shop.platform.pagination import paginate

SWEEP_BATCH = 500
CANCEL_REASON = {
    "cancelled": "appointment_cancelled",
    "completed": "appointment_completed",
    "no_show": "appointment_no_show",
}
STOPPED_ERROR = "Not sent: the appointment changed before the message left."
NOTICE_SOURCE = {"api_key": "api", "teammate": "dashboard", "customer": "customer"}


@dataclass(frozen=True)
class Settings:
    """A tenant's reminder settings (the `booking` keys of DESIGN.md; absent: all off)."""

    shop_name: str
    timezone: str
    rules: list = field(default_factory=list)
    quiet_hours: tuple | None = None
    customer_messages: dict = field(default_factory=dict)
    templates: dict = field(default_factory=dict)
    booking: dict | None = None

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @classmethod
    def of(cls, tenant: Tenant) -> "Settings":
        booking = tenant.booking or {}
        quiet = booking.get("quiet_hours")
        return cls(
            shop_name=tenant.name,
            timezone=tenant.timezone or "UTC",
            rules=list(booking.get("reminders") or []),
            quiet_hours=tuple(quiet) if quiet else None,
            customer_messages=dict(booking.get("customer_messages") or {}),
            templates=dict(booking.get("templates") or {}),
            booking=tenant.booking,
        )


TENANT_SQL = named_sql(f"SELECT {Tenant.columns()} FROM tenant WHERE id = :tenant")


def settings_of(tenant_id: str) -> Settings:
    return Settings.of(Tenant.from_row(run_sql(TENANT_SQL, {"tenant": tenant_id})[0]))


def settings_ahead(tenant_id: str):
    """Inside a write transaction: the tenant's settings read ahead (shop.db.read_ahead), so a
    booking's reminders cost no round trip of their own on PostgreSQL."""
    rows = read_ahead(TENANT_SQL, {"tenant": tenant_id})
    return lambda: Settings.of(Tenant.from_row(rows()[0]))


def _utc(day: date, minute_of_day: int, zone: ZoneInfo) -> datetime:
    """A wall-clock minute of `day` in `zone` as a naive UTC instant (a time a DST gap skips is
    read with the offset before the change, as zoneinfo does)."""
    local = datetime.combine(day, time(minute_of_day // 60, minute_of_day % 60), tzinfo=zone)
    return local.astimezone(UTC).replace(tzinfo=None)


def _minutes(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:5])


def start_instant(appointment: Appointment, zone: ZoneInfo) -> datetime:
    """The appointment's start as a naive UTC instant."""
    day = appointment.scheduled_date
    day = day if isinstance(day, date) else date.fromisoformat(str(day))
    return _utc(day, _minutes(appointment.scheduled_time), zone)


def quiet_window(instant: datetime, quiet: tuple, zone: ZoneInfo) -> tuple[datetime, datetime] | None:
    """The (begin, end) UTC instants of the quiet hours that hold `instant`, or None."""
    local = instant.replace(tzinfo=UTC).astimezone(zone)
    minute, day = local.hour * 60 + local.minute, local.date()
    begin, end = _minutes(quiet[0]), _minutes(quiet[1])
    if begin < end:
        if not begin <= minute < end:
            return None
        return _utc(day, begin, zone), _utc(day, end, zone)
    if minute >= begin:  # crosses midnight: tonight until tomorrow morning
        return _utc(day, begin, zone), _utc(day + timedelta(days=1), end, zone)
    if minute < end:  # this morning's end of last night's quiet hours
        return _utc(day - timedelta(days=1), begin, zone), _utc(day, end, zone)
    return None


def plan(
    before_minutes: int, start: datetime, made_at: datetime, quiet, zone
) -> tuple[datetime, str, str | None]:
    """(scheduled_for, status, reason) of a reminder `before_minutes` real minutes before `start`.

    In quiet hours it moves to the minute before they begin; if that is before `made_at` (the
    booking or the change), to when they end, unless that is after the start: then too late."""
    due = start - timedelta(minutes=before_minutes)
    if due < made_at:
        return due, "skipped", "too_late"
    window = quiet_window(due, quiet, zone) if quiet else None
    if window is None:
        return due, "pending", None
    begin, end = window
    moved = begin - timedelta(minutes=1)
    if moved >= made_at:
        return moved, "pending", None
    if end < start:
        return end, "pending", None
    return end, "skipped", "too_late"


def _new_row(tenant_id: str, appointment: Appointment, kind: str, **fields) -> AppointmentReminder:
    now = clock.now()
    row = AppointmentReminder(
        id=f"rem_{secrets.token_hex(12)}",
        tenant=tenant_id,
        appointment=appointment.id,
        kind=kind,
        created_at=now,
        updated_at=now,
        **fields,
    )
    row.save(force_insert=True)
    return row


def _plan_reminders(tenant_id: str, appointment: Appointment, settings: Settings) -> None:
    """One row per rule of the tenant: pending, or skipped too_late."""
    if not settings.rules or appointment.status in TERMINAL_STATUSES:
        return
    zone, now = settings.zone, clock.now()
    start = start_instant(appointment, zone)
    for rule in settings.rules:
        when, status, reason = plan(rule["before_minutes"], start, now, settings.quiet_hours, zone)
        _new_row(
            tenant_id,
            appointment,
            "reminder",
            before_minutes=rule["before_minutes"],
            channels=list(rule["channels"]),
            starts_at=start,
            scheduled_for=when,
            status=status,
            reason=reason,
        )


def replan_future(tenant_id: str, settings: Settings) -> int:
    """After a change of the rules or quiet hours (inside its transaction): every appointment not
    finished whose start is still ahead gets the reminders the new settings give it. A pending row
    the new plan repeats is kept; any other pending row is cancelled (`settings_changed`); a rule
    with no row yet gets one, planned from now (so `too_late` if its time has passed). A rule's row
    that was already sent, skipped or failed is left alone: nobody is reminded twice. Returns how
    many appointments were looked at."""
    zone, now = settings.zone, clock.now()
    today = now.replace(tzinfo=UTC).astimezone(zone).date()
    query = (
        Appointment.for_tenant(tenant_id)
        .where(
            Appointment.status.not_in(TERMINAL_STATUSES)
            & (Appointment.scheduled_date >= today - timedelta(days=1))
        )
        .order_by(Appointment.id)  # locked in one order, as every change locks its appointment first
    )
    count = 0
    for appointment in locked(query):
        start = start_instant(appointment, zone)
        if start > now:
            _replan(tenant_id, appointment, start, settings, now)
            count += 1
    return count


def _replan(tenant_id: str, appointment: Appointment, start: datetime, settings: Settings, now) -> None:
    rows = locked(
        AppointmentReminder.select().where(
            (AppointmentReminder.appointment == appointment.id)
            & (AppointmentReminder.kind == "reminder")
            & (AppointmentReminder.status != "cancelled")
        )
    )
    rules = {rule["before_minutes"]: rule for rule in settings.rules}
    handled = set()
    for row in rows:
        rule = rules.get(row.before_minutes)
        if row.status == "pending" and not _plan_holds(row, rule, start, settings, now):
            row.status, row.reason, row.updated_at = "cancelled", "settings_changed", now
            row.save()
            continue
        handled.add(row.before_minutes)
    for before_minutes, rule in rules.items():
        if before_minutes in handled:
            continue
        when, status, reason = plan(before_minutes, start, now, settings.quiet_hours, settings.zone)
        _new_row(
            tenant_id,
            appointment,
            "reminder",
            before_minutes=before_minutes,
            channels=list(rule["channels"]),
            starts_at=start,
            scheduled_for=when,
            status=status,
            reason=reason,
        )


def _plan_holds(
    row: AppointmentReminder, rule: dict | None, start: datetime, settings: Settings, now
) -> bool:
    """Whether a pending row is what the settings would plan now (one already due stays if its
    rule does: its time is not moved under a consumer about to send it)."""
    if rule is None or list(row.channels or ()) != list(rule["channels"]) or row.starts_at != start:
        return False
    if row.scheduled_for <= now:
        return True
    when, status, _ = plan(row.before_minutes, start, now, settings.quiet_hours, settings.zone)
    return status == "pending" and when == row.scheduled_for


STOP_MESSAGES_SQL = named_sql(
    "UPDATE message SET delivery_status = 'failed', delivery_error = :error "
    "WHERE id = :id AND delivery_status = 'queued' RETURNING id"
)


def _stop(appointment: Appointment, reason: str) -> None:
    """Cancel the appointment's pending reminders, and those whose message is still queued (not
    yet claimed for the provider): nothing of them leaves after this transaction commits."""
    now = clock.now()
    rows = AppointmentReminder.select().where(
        (AppointmentReminder.appointment == appointment.id)
        & (AppointmentReminder.kind == "reminder")
        & (AppointmentReminder.status.in_(("pending", "sent")))
    )
    for row in locked(rows):
        if row.status == "sent":
            stopped = run_sql(STOP_MESSAGES_SQL, {"id": row.message_id, "error": STOPPED_ERROR})
            if not stopped:
                continue  # already with the provider (or delivered): it stays sent
        row.status, row.reason, row.updated_at = "cancelled", reason, now
        row.save()


# --- what the appointment changes call, inside their transactions ----------------------------


def on_created(tenant_id: str, appointment: Appointment, actor: Actor | None, ahead=None) -> None:
    """A booking: its reminders, the confirmation, and for an online booking the staff notice;
    `ahead`, what settings_ahead() gave earlier in the transaction, saves the settings' read."""
    settings = ahead() if ahead is not None else settings_of(tenant_id)
    _plan_reminders(tenant_id, appointment, settings)
    if settings.customer_messages.get("confirmation") and appointment.status not in TERMINAL_STATUSES:
        _customer_message(tenant_id, appointment, "confirmation", settings)
    if appointment.source == "online_booking":
        _notice(tenant_id, appointment, "appointment_booked", {"source": "online_booking"})


def on_rescheduled(tenant_id: str, appointment: Appointment, moved: bool) -> None:
    """A change of date, time or duration: the pending reminders give way to new ones; a change
    of date or time (`moved`) also tells the customer."""
    settings = settings_of(tenant_id)
    _stop(appointment, "rescheduled")
    _plan_reminders(tenant_id, appointment, settings)
    if moved and settings.customer_messages.get("reschedule"):
        _customer_message(tenant_id, appointment, "reschedule", settings)


def on_reopened(tenant_id: str, appointment: Appointment) -> None:
    """A reset from cancelled, completed or no_show: new reminders, no confirmation."""
    _plan_reminders(tenant_id, appointment, settings_of(tenant_id))


def on_cancelled(tenant_id: str, appointment: Appointment, actor: Actor | None) -> None:
    """A cancel from any source: reminders stop, the customer is told, the staff see it."""
    settings = settings_of(tenant_id)
    _stop(appointment, CANCEL_REASON["cancelled"])
    if settings.customer_messages.get("cancellation"):
        _customer_message(tenant_id, appointment, "cancellation", settings)
    reason = appointment.cancellation_reason
    _notice(
        tenant_id,
        appointment,
        "appointment_canceled",
        {
            "cancellation_reason": reason[:500] if reason else None,
            "source": NOTICE_SOURCE.get(actor.kind, "in_app") if actor else "in_app",
        },
    )


def on_finished(tenant_id: str, appointment: Appointment) -> None:
    """completed or no_show: the pending reminders are cancelled with that reason."""
    _stop(appointment, CANCEL_REASON[appointment.status])


# --- messages ---------------------------------------------------------------------------------


def _usable(tenant_id: str, appointment: Appointment, channel: str) -> str | None:
    """The appointment's address for `channel` if it is valid and not suppressed."""
    raw = appointment.customer_phone if channel == "sms" else appointment.customer_email
    if not raw:
        return None
    address = normalise_address(channel, raw)
    if not (PHONE if channel == "sms" else EMAIL).match(address):
        return None
    if run_sql(SUPPRESSED_SQL, {"tenant": tenant_id, "channel": channel, "address": address}):
        return None
    return address


SUPPRESSED_SQL = named_sql(
    "SELECT 1 FROM suppression WHERE tenant_id = :tenant AND channel = :channel AND address = :address"
)


def first_usable(tenant_id: str, appointment: Appointment, channels) -> tuple[str, str] | None:
    for channel in channels:
        address = _usable(tenant_id, appointment, channel)
        if address is not None:
            return channel, address
    return None


# the customer an appointment's phone (as typed or normalised) or email matches, first by id; a
# NULL parameter matches nothing, so an appointment without a phone or an email is matched by the
# other. Two look-ups, each on its index, materialized before they are ordered (an OR of the two, or
# an ordered union, kept SQLite on the tenant's index: every customer of the shop read per reminder)
CUSTOMER_SQL = named_sql(
    "WITH matched AS MATERIALIZED (SELECT id FROM customer WHERE tenant_id = :tenant "
    "AND phone IN (:raw_phone, :phone) UNION ALL SELECT id FROM customer WHERE tenant_id = :tenant "
    "AND LOWER(email) = :email) SELECT id FROM matched ORDER BY id LIMIT 1"
)


def _conversation(tenant_id: str, appointment: Appointment, channel: str, address: str) -> int:
    """The customer's conversation (matched by phone or email), else the one this appointment's
    messages went to, else a new unlinked one."""
    phone = normalise_address("sms", appointment.customer_phone or "")
    email = (appointment.customer_email or "").strip().lower()
    customer = None
    if phone or email:
        params = {"tenant": tenant_id, "raw_phone": None, "phone": None, "email": email or None}
        if phone:
            params.update(raw_phone=appointment.customer_phone, phone=phone)
        customer = run_sql(CUSTOMER_SQL, params)
    if customer:
        rows = run_sql(CONVERSATION_SQL, {"tenant": tenant_id, "customer": customer[0][0]})
        if rows:
            return rows[0][0]
        return conversation_for_customer(tenant_id, Customer.get_by_id(customer[0][0])).id
    earlier = (
        Message.select(Message.conversation)
        .join(AppointmentReminder, on=(AppointmentReminder.message_id == Message.id))
        .where((AppointmentReminder.appointment == appointment.id) & (Message.tenant == tenant_id))
        .first()
    )
    if earlier is not None:
        return earlier.conversation_id
    return Conversation.create(
        tenant=tenant_id,
        customer=None,
        customer_email=appointment.customer_email,
        customer_name=appointment.customer_name,
    ).id


TOUCH_SQL = named_sql("UPDATE conversation SET last_outbound_at = :now, updated_at = :now WHERE id = :id")


def _queue_message(tenant_id, appointment, kind, channel, address, settings: Settings, job=True) -> int:
    """An automated outbound message in the send pipeline; its id. With `job` its send job commits
    with it; without, the caller delivers it after the commit (the message sweep takes it if not)."""
    found = texts.values(appointment, settings.shop_name, settings.timezone, settings.booking)
    body, subject = texts.render(kind, channel, found, settings.templates)
    conversation_id = _conversation(tenant_id, appointment, channel, address)
    now = clock.now()
    message_id = Message.create_row(
        tenant=tenant_id,
        conversation=conversation_id,
        channel=channel,
        direction="outbound",
        body=body,
        subject=subject,
        sender=sender_for(channel, queue.settings()),
        recipient=address,
        read=True,
        created_at=now,
        delivery_status="queued",
        delivery_attempts=0,
        next_attempt_at=now,
        automated=True,
    ).id
    run_sql(TOUCH_SQL, {"id": conversation_id, "now": now})
    if job:
        queue.enqueue(queue.SEND_MESSAGE, message_id)
    return message_id


def _customer_message(tenant_id: str, appointment: Appointment, kind: str, settings: Settings) -> None:
    """A confirmation, reschedule or cancellation message, queued now: SMS when the appointment
    has a usable phone, else email; none usable: a skipped row (no_channel)."""
    start, now = start_instant(appointment, settings.zone), clock.now()
    chosen = first_usable(tenant_id, appointment, ("sms", "email"))
    if chosen is None:
        _new_row(
            tenant_id,
            appointment,
            kind,
            starts_at=start,
            scheduled_for=now,
            status="skipped",
            reason="no_channel",
        )
        return
    channel, address = chosen
    message_id = _queue_message(tenant_id, appointment, kind, channel, address, settings)
    _new_row(
        tenant_id,
        appointment,
        kind,
        starts_at=start,
        scheduled_for=now,
        status="sent",
        channel=channel,
        message_id=message_id,
    )


def _notice(tenant_id: str, appointment: Appointment, type_: str, extra: dict) -> None:
    """A global inbox notification about the appointment, tied to its ticket when it has one."""
    from shop.models import Ticket

    ticket = None
    if appointment.ticket_id and str(appointment.ticket_id).isdigit():
        number = int(appointment.ticket_id)
        if number <= 2_147_483_647 and Ticket.for_tenant(tenant_id).where(Ticket.id == number).exists():
            ticket = number
    day = appointment.scheduled_date
    day = day.isoformat() if isinstance(day, date) else str(day)
    what = "cancelled" if type_ == "appointment_canceled" else "booked online"
    Notification.create(
        tenant=tenant_id,
        scope="global",
        ticket=ticket,
        type=type_,
        message=f"Appointment {what}: {appointment.customer_name}, {day} at {appointment.scheduled_time}",
        details={
            "appointment_id": appointment.id,
            "scheduled_date": day,
            "scheduled_time": appointment.scheduled_time,
            **extra,
        },
        created_at=clock.now(),
    )


# --- the job --------------------------------------------------------------------------------


def due_reminder_ids(limit: int = SWEEP_BATCH) -> list[str]:
    """Pending reminders whose time has come, oldest first: one range of the (status,
    scheduled_for) index, whatever the number of future or finished rows."""
    rows = (
        AppointmentReminder.select(AppointmentReminder.id)
        .where((AppointmentReminder.status == "pending") & (AppointmentReminder.scheduled_for <= clock.now()))
        .order_by(AppointmentReminder.scheduled_for)
        .limit(limit)
    )
    return [row.id for row in rows]


BATCH = 10  # a job that takes its own reminder also takes up to BATCH - 1 others already due

# the job's statements as constant SQL: built by the query builder they cost the consumer more
# than the rest of a reminder's claim (docs/performance.md, Reminders)
DUE_SQL = named_sql(
    "SELECT appointment_id FROM appointment_reminder WHERE id = :id AND status = 'pending' "
    "AND scheduled_for <= :now"
)
OTHERS_DUE_SQL = named_sql(
    "SELECT id, appointment_id FROM appointment_reminder WHERE status = 'pending' AND scheduled_for <= :now "
    "AND id <> :id ORDER BY scheduled_for LIMIT :others"
)
_APPOINTMENT = f"SELECT {Appointment.columns()} FROM appointment WHERE id = :id"
_REMINDER = (
    f"SELECT {AppointmentReminder.columns()} FROM appointment_reminder WHERE id = :id AND status = 'pending'"
)
# the appointment first, as every change of it locks it first: no lock-order deadlock; a batch's
# other appointments held by another transaction are passed over (SKIP LOCKED: two batches never
# wait on each other); on SQLite the write transaction holds every row
LOCK_SQL = {
    "sqlite": {
        "wait": named_sql(_APPOINTMENT),
        "skip": named_sql(_APPOINTMENT),
        "reminder": named_sql(_REMINDER),
    },
    "postgres": {
        "wait": named_sql(f"{_APPOINTMENT} FOR UPDATE"),
        "skip": named_sql(f"{_APPOINTMENT} FOR UPDATE SKIP LOCKED"),
        "reminder": named_sql(f"{_REMINDER} FOR UPDATE"),
    },
}
SETTLE_SQL = named_sql(
    "UPDATE appointment_reminder SET status = :status, reason = :reason, channel = :channel, "
    "message_id = :message, updated_at = :now WHERE id = :id"
)


def claim_due(reminder_id: str) -> tuple[str | None, list[int]]:
    """Claim a due reminder and queue its message in the send pipeline, in one transaction that
    holds the appointment's row: the appointment is re-checked (still at that time, not finished),
    so a cancel or a reschedule either committed first (and the row is no longer pending) or waits
    for this one (and stops the message while it is still queued). The same transaction takes up
    to BATCH - 1 other due reminders whose appointments no other transaction holds (one commit for
    all; their own jobs then find them taken). The outcome of its own (None when the row was not
    this job's to take) and the ids of the messages queued, for the job to deliver at once: they
    have no send job of their own (the message sweep takes any the job could not)."""
    first = run_sql(DUE_SQL, {"id": reminder_id, "now": clock.now()})
    if not first:
        return None, []
    queued: list[int] = []
    settings: dict[str, Settings] = {}  # read once per tenant and batch
    with write_transaction():
        outcome = _claim(reminder_id, first[0][0], "wait", settings, queued)
        if outcome is None:
            return None, []
        others = run_sql(OTHERS_DUE_SQL, {"id": reminder_id, "now": clock.now(), "others": BATCH - 1})
        for other_id, appointment_id in others:
            _claim(other_id, appointment_id, "skip", settings, queued)
    return outcome, queued


def _claim(reminder_id: str, appointment_id: int, lock: str, settings: dict, queued: list) -> str | None:
    """One reminder's claim inside the job's transaction (see claim_due); `lock` "skip" passes
    over an appointment another transaction holds. A message it queues has its id added to `queued`."""
    statements = LOCK_SQL[backend()]
    appointment = run_sql(statements[lock], {"id": appointment_id})
    if not appointment:  # gone, or (a batch's other) held by another transaction: not ours
        return None
    found = run_sql(statements["reminder"], {"id": reminder_id})
    if not found:
        return None
    appointment, row = Appointment.from_row(appointment[0]), AppointmentReminder.from_row(found[0])
    tenant_id, now = row.tenant_id, clock.now()
    if tenant_id not in settings:
        settings[tenant_id] = settings_of(tenant_id)
    shop = settings[tenant_id]
    if appointment.status in TERMINAL_STATUSES:
        row.status, row.reason = "cancelled", CANCEL_REASON[appointment.status]
    elif start_instant(appointment, shop.zone) != row.starts_at:
        row.status, row.reason = "cancelled", "rescheduled"
    elif row.kind == "reminder" and all(r["before_minutes"] != row.before_minutes for r in shop.rules):
        # its rule was removed by a settings change that did not see this row (a booking committed
        # while the change ran): it is not sent
        row.status, row.reason = "cancelled", "settings_changed"
    elif now >= row.starts_at:  # the consumers were down past the start: no use any more
        row.status, row.reason = "skipped", "too_late"
    elif (chosen := first_usable(tenant_id, appointment, row.channels or ())) is None:
        row.status, row.reason = "skipped", "no_channel"
    else:
        row.channel = chosen[0]
        row.message_id = _queue_message(tenant_id, appointment, "reminder", *chosen, shop, job=False)
        row.status = "sent"
        queued.append(row.message_id)
    run_sql(
        SETTLE_SQL,
        {
            "id": row.id,
            "status": row.status,
            "reason": row.reason,
            "channel": row.channel,
            "message": row.message_id,
            "now": now,
        },
    )
    return row.status


FAILED_SQL = named_sql(
    "UPDATE appointment_reminder SET status = 'failed', reason = 'provider_failed', updated_at = :now "
    "WHERE message_id = :id AND status = 'sent'"
)


def message_failed(message_id: int) -> None:
    """The send pipeline gave up on a message (inside its transaction): its row, if any, failed."""
    run_sql(FAILED_SQL, {"id": message_id, "now": clock.now()})


# --- the read side ---------------------------------------------------------------------------


def list_reminders(tenant_id: str, appointment_id: int, limit: int, cursor: str | None) -> dict:
    """GET /appointments/<id>/reminders: one page of its rows by scheduled_for then id, and the total."""
    if not Appointment.for_tenant(tenant_id).where(Appointment.id == appointment_id).exists():
        raise not_found("appointment", appointment_id)
    rows = AppointmentReminder.for_tenant(tenant_id).where(AppointmentReminder.appointment == appointment_id)
    order = [(AppointmentReminder.scheduled_for, False), (AppointmentReminder.id, False)]
    return paginate(rows, order, limit, cursor).envelope(total=rows.count())


def reminders_by_appointment(tenant_id: str, appointment_ids: list[int]) -> dict[int, list]:
    """The rows of several appointments (the console's week), by appointment id."""
    found: dict[int, list] = {}
    if not appointment_ids:
        return found
    rows = (
        AppointmentReminder.for_tenant(tenant_id)
        .where(AppointmentReminder.appointment.in_(appointment_ids))
        .order_by(AppointmentReminder.scheduled_for, AppointmentReminder.id)
    )
    for row in rows:
        found.setdefault(row.appointment_id, []).append(row)
    return found

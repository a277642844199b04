"""Appointment rules: the status machine, ticket links, capacity, and the events each change emits."""

from datetime import date

from schemas.appointments import AppointmentSchema
from shop import clock
from shop.db import deferred, locked, next_id_ahead, write_transaction
from shop.domain import actor as actors
from shop.domain.actor import Actor
from shop.domain.appointments import reminders
from shop.domain.appointments.feeds import raise_sequence
from shop.domain.appointments.holds import consume_hold, mark_consumed_by
from shop.domain.appointments.slots import SlotTaken, Span, booking_of, has_capacity, service_buffers
from shop.domain.events.outbox import emit, subscriptions_ahead
from shop.domain.records.tickets import get_visible_ticket
from shop.models import Appointment
from shop.models.appointments import TERMINAL_STATUSES
from shop.platform.errors import ApiError, not_found
from shop.platform.pagination import paginate

ORDER = [(Appointment.scheduled_date, True), (Appointment.scheduled_time, True), (Appointment.id, True)]
LEAN_FIELDS = (
    "status",
    "scheduled_date",
    "scheduled_time",
    "duration_minutes",
    "tech_id",
    "ticket_id",
    "customer_name",
    "source",  # who booked it (api, staff, online_booking): DESIGN's "online bookings source: online_booking"
)
# PATCH moves between the non-terminal statuses (see docs/decisions.md, issue 3)
NEXT_STATUSES = {
    "scheduled": {"pending", "confirmed", "checked_in"},
    "pending": {"scheduled", "confirmed", "checked_in"},
    "confirmed": {"scheduled", "pending", "checked_in"},
    "checked_in": {"confirmed"},
}
SCHEDULE_FIELDS = ("scheduled_date", "scheduled_time", "duration_minutes")
EDITABLE_FIELDS = (
    "customer_name",
    "customer_phone",
    "customer_email",
    "service_description",
    *SCHEDULE_FIELDS,
    "notes",
    "ticket_id",
)
# the REST resource is also the completed/no_show event data: one schema makes both
APPOINTMENT = AppointmentSchema()


def _iso_date(value) -> str:
    return value.isoformat() if isinstance(value, date) else str(value)


def lean_payload(appointment: Appointment, kind: str) -> dict:
    """The lean created/updated/canceled payload: no phone or email, id as a string, and how it was
    booked (`source`)."""
    data = {"object": "appointment", "id": str(appointment.id)}
    data.update({name: getattr(appointment, name) for name in LEAN_FIELDS})
    data["scheduled_date"] = _iso_date(appointment.scheduled_date)
    data["created_at"] = clock.isoformat(appointment.created_at)
    if kind == "updated":
        data["updated_at"] = clock.isoformat(appointment.updated_at)
    if kind == "canceled":
        data["cancelled_at"] = clock.isoformat(appointment.cancelled_at)
        reason = appointment.cancellation_reason
        data["cancellation_reason"] = reason[:500] if reason else None
    data["source_kind"] = "observed"
    return data


def list_appointments(tenant_id: str, args: dict) -> dict:
    """One page of the tenant's appointments, latest scheduled_date first."""
    a = Appointment
    query = a.for_tenant(tenant_id)
    if "date_from" in args:
        query = query.where(a.scheduled_date >= args["date_from"])
    if "date_to" in args:
        query = query.where(a.scheduled_date <= args["date_to"])
    for name in ("status", "location_id", "ticket_id", "tech_id"):
        if name in args:
            query = query.where(getattr(a, name) == args[name])
    if "customer_email" in args:
        query = query.where(a.email_key == args["customer_email"].lower())
    return paginate(query, ORDER, args["limit"], args["cursor"]).envelope()


def find_appointment(tenant_id: str, appointment_id: int) -> Appointment:
    """The tenant's appointment, or 404 (another tenant's is just as missing); called inside a write
    transaction, so it is locked until that transaction ends (shop.db.locked)."""
    found = locked(Appointment.for_tenant(tenant_id).where(Appointment.id == appointment_id)).first()
    if found is None:
        raise not_found("appointment", appointment_id)
    return found


def linkable_ticket_id(tenant_id: str, ticket_ref: str) -> str:
    """The canonical id of a ticket the public surface can see, or 404 not_found."""
    ticket = get_visible_ticket(tenant_id, ticket_ref, allow_billing_only=False)
    if ticket is None:
        raise not_found("ticket", ticket_ref, "ticket_id")
    return str(ticket.id)


def _ensure_capacity(tenant_id: str, a: Appointment, code: str, tech_id: str | None = None) -> None:
    """409 `code` (SlotTaken for slot_unavailable) unless the appointment fits; `tech_id` also checks
    that tech's calendar (a held booking's; other bookings never have)."""
    span = Span(a.duration_minutes, a.buffer_before_minutes or 0, a.buffer_after_minutes or 0, tech_id)
    day = a.scheduled_date if isinstance(a.scheduled_date, date) else date.fromisoformat(a.scheduled_date)
    if not has_capacity(tenant_id, day, a.scheduled_time, span, exclude_id=a.id):
        taken = SlotTaken(day, a.scheduled_time, span)
        if code == "slot_unavailable":
            raise taken
        raise ApiError(409, code, str(taken), param="scheduled_time")


# the appointment's stored `source` by who booked it (a body's own `source` wins: activity, fixtures)
STORED_SOURCE = {"api_key": "api", "teammate": "staff"}


def stored_source(actor: Actor | None) -> str:
    if actor is None:
        return "api"
    return STORED_SOURCE.get(actor.kind, actor.source)


def create_appointment(tenant_id: str, body: dict, actor: Actor | None = None) -> Appointment:
    """Book an appointment: the capacity check and the insert hold one write lock; with a `hold_id`
    it books the held span and consumes the hold in the same transaction. Its reminders, the
    confirmation and the online booking's staff notice commit with it."""
    fields = {name: body[name] for name in EDITABLE_FIELDS if name in body}
    fields.update({name: body[name] for name in ("tech_id", "location_id", "status") if name in body})
    try:
        with write_transaction():
            # PostgreSQL: these read with the capacity check's round trip, so the insert, the event,
            # its deliveries and the reminders all go out with the COMMIT (shop.db.read_ahead)
            subscriptions, new_id = subscriptions_ahead(tenant_id), next_id_ahead(Appointment)
            settings_ahead = reminders.settings_ahead(tenant_id)
            if fields.get("ticket_id") is not None:
                fields["ticket_id"] = linkable_ticket_id(tenant_id, fields["ticket_id"])
            hold = _booked_service(tenant_id, body, fields)
            appointment = Appointment(
                tenant=tenant_id,
                source=body.get("source", stored_source(actor)),
                created_at=clock.now(),
                **fields,
            )
            _ensure_capacity(tenant_id, appointment, "slot_unavailable", hold and hold.tech_id)
            _insert(appointment, new_id)
            if hold is not None:
                mark_consumed_by(hold, appointment.id)
            emit(tenant_id, "appointment.created", lean_payload(appointment, "created"), subscriptions)
            reminders.on_created(tenant_id, appointment, actor, settings_ahead)
    except SlotTaken as taken:
        raise taken.answer(tenant_id) from None
    return appointment


def _insert(appointment: Appointment, new_id) -> None:
    """Insert a new appointment: with an id read ahead (next_id_ahead) its insert is held for the
    transaction's next round trip; else the insert assigns the id and returns it."""
    if new_id is None:
        appointment.save()
        return
    appointment.id = new_id()
    appointment.fill_keys()
    with deferred():
        Appointment.insert_row(**appointment.__data__)


def _booked_service(tenant_id: str, body: dict, fields: dict):
    """Fill in the service, tech and buffers from the hold (consumed here) or the named service."""
    if body.get("hold_id") is not None:
        hold = consume_hold(
            tenant_id,
            body["hold_id"],
            body["scheduled_date"],
            body["scheduled_time"],
            body.get("duration_minutes"),
        )
        fields.update(
            duration_minutes=hold.duration_minutes,
            tech_id=hold.tech_id,
            service_id=hold.service_id,
            buffer_before_minutes=hold.buffer_before_minutes,
            buffer_after_minutes=hold.buffer_after_minutes,
        )
        return hold
    if body.get("service_id") is not None:  # an in-app booking of a service of the settings
        booking, _ = booking_of(tenant_id)
        service = booking.service(body["service_id"]) if booking else None
        if service is None:
            raise ApiError(
                400,
                "invalid_service_id",
                f"No service {body['service_id']!r} in the booking settings.",
                param="service_id",
            )
        fields.update(service_id=body["service_id"], **service_buffers(service))
    if body.get("tech_id") is not None:  # a tech of the roster, as the slots query knows them
        booking, _ = booking_of(tenant_id)
        if booking is None or booking.tech(body["tech_id"]) is None:
            raise ApiError(
                400,
                "invalid_field",
                f"No tech {body['tech_id']!r} on the booking settings' roster.",
                param="tech_id",
            )
    return None


def update_appointment(
    tenant_id: str, appointment_id: int, changes: dict, actor: Actor | None = None
) -> Appointment:
    """PATCH: field edits, reschedules, ticket links and status moves, with their one event (a
    move to cancelled is a cancel, with the cancel's reminders, message and notice)."""
    status = changes.get("status")
    if status in TERMINAL_STATUSES and len(changes) > 1:
        raise ApiError(
            400, "invalid_status", f"status {status!r} must be the only field in the body.", param="status"
        )
    try:
        return _update(tenant_id, appointment_id, changes, status, actor)
    except SlotTaken as taken:
        raise taken.answer(tenant_id) from None


def _update(
    tenant_id: str, appointment_id: int, changes: dict, status: str | None, actor: Actor | None
) -> Appointment:
    with write_transaction():
        appointment = find_appointment(tenant_id, appointment_id)
        previous = appointment.status
        _check_status_move(previous, status)
        if status == "cancelled":
            return _cancel(tenant_id, appointment, None, actor)
        if changes.get("ticket_id") is not None:
            changes = {**changes, "ticket_id": linkable_ticket_id(tenant_id, changes["ticket_id"])}
        changed = {name: value for name, value in changes.items() if getattr(appointment, name) != value}
        if not changed:
            return appointment
        for name, value in changed.items():
            setattr(appointment, name, value)
        raise_sequence(appointment, changed)
        if previous == "cancelled":  # un-cancel: it is no longer cancelled
            appointment.cancelled_at = appointment.cancellation_reason = None
            _ensure_capacity(tenant_id, appointment, "status_reset_failed")
        elif set(changed) & set(SCHEDULE_FIELDS):  # a reschedule (after a reset from completed too)
            _ensure_capacity(tenant_id, appointment, "slot_unavailable")
        saved = _save_updated(tenant_id, appointment)
        if previous in TERMINAL_STATUSES:  # reset: its reminders were cancelled, it gets new ones
            reminders.on_reopened(tenant_id, saved)
        elif saved.status in TERMINAL_STATUSES:  # PATCH to completed or no_show
            reminders.on_finished(tenant_id, saved)
        elif set(changed) & set(SCHEDULE_FIELDS):
            moved = bool(set(changed) & {"scheduled_date", "scheduled_time"})
            reminders.on_rescheduled(tenant_id, saved, moved)
        return saved


def _check_status_move(previous: str, status: str | None) -> None:
    if previous in TERMINAL_STATUSES:
        if status != "confirmed":
            raise ApiError(
                409,
                "status_reset_required",
                f"The appointment is {previous}; reset its status to confirmed before any other change.",
                param="status",
            )
        return
    if status is None or status == previous or status in TERMINAL_STATUSES:
        return
    if status not in NEXT_STATUSES[previous]:
        raise ApiError(
            409,
            "status_transition_failed",
            f"An appointment cannot move from {previous} to {status}.",
            param="status",
        )


def _save_updated(tenant_id: str, appointment: Appointment) -> Appointment:
    appointment.updated_at = clock.now()
    appointment.save()
    emit(tenant_id, "appointment.updated", lean_payload(appointment, "updated"))
    return appointment


def _cancel(tenant_id: str, appointment: Appointment, reason: str | None, actor: Actor | None) -> Appointment:
    appointment.status = "cancelled"
    appointment.cancelled_at = clock.now()
    appointment.cancellation_reason = reason
    raise_sequence(appointment)
    appointment.save()
    emit(tenant_id, "appointment.canceled", lean_payload(appointment, "canceled"))
    reminders.on_cancelled(tenant_id, appointment, actor)
    return appointment


def cancel_appointment(
    tenant_id: str, appointment_id: int, reason: str | None, actor: Actor | None = None
) -> Appointment:
    """Cancel once: records when and why and emits appointment.canceled only."""
    with write_transaction():
        appointment = find_appointment(tenant_id, appointment_id)
        if appointment.status == "cancelled":
            raise ApiError(422, "cancel_failed", "The appointment is already cancelled.")
        return _cancel(tenant_id, appointment, reason, actor)


def finish_appointment(
    tenant_id: str, appointment_id: int, status: str, actor: Actor | None = None
) -> Appointment:
    """complete or no_show: a terminal move. Only an API-driven one emits the full appointment
    (the spec: dashboard completions and no-shows are not delivered); any stops the reminders."""
    with write_transaction():
        appointment = find_appointment(tenant_id, appointment_id)
        current = appointment.status
        if current == status or (status == "completed" and current == "cancelled"):
            raise ApiError(
                409,
                "status_transition_failed",
                f"An appointment that is {appointment.status} cannot be marked {status}.",
            )
        appointment.status = status
        raise_sequence(appointment)
        appointment.save()
        if actor is None or actor.kind == "api_key":
            emit(tenant_id, f"appointment.{status}", APPOINTMENT.dump(appointment))
        reminders.on_finished(tenant_id, appointment)
    return appointment


def link_ticket(tenant_id: str, appointment_id: int, ticket_ref: str) -> Appointment:
    """Link a visible ticket (a non-billing-only one); emits appointment.updated when it changes."""
    with write_transaction():
        appointment = find_appointment(tenant_id, appointment_id)
        ticket_id = linkable_ticket_id(tenant_id, ticket_ref)
        if appointment.status == "cancelled":
            raise ApiError(
                422,
                "link_ticket_failed",
                "A cancelled appointment cannot be linked to a ticket; reset its status to confirmed first.",
            )
        if appointment.ticket_id == ticket_id:
            return appointment
        appointment.ticket_id = ticket_id
        return _save_updated(tenant_id, appointment)


def book_from_activity(tenant_id: str, body: dict) -> dict:
    """In-app activity appointment.created: a dashboard or online booking."""
    source = body.get("source", "online_booking")
    actor = actors.customer(source) if source == "online_booking" else actors.in_app("system", source)
    return APPOINTMENT.dump(create_appointment(tenant_id, {**body, "source": source}, actor))

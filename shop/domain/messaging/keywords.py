"""SMS keywords: STOP and its family, START, HELP, CONFIRM; each answers and may change records."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from zoneinfo import ZoneInfo

from shop import clock
from shop.domain.appointments.appointments import update_appointment
from shop.domain.messaging import suppressions
from shop.models import Appointment, Tenant

STOP = {"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "OPTOUT", "REVOKE"}
START = {"START", "UNSTOP", "YES"}
HELP = {"HELP", "INFO"}
CONFIRM = {"CONFIRM", "C"}
KEYWORDS = STOP | START | HELP | CONFIRM
CONFIRM_DAYS = 7
CONFIRMABLE = ("scheduled", "pending")
DEFAULT_HELP = "{name}: reply STOP to stop texts, START to resume."


@dataclass
class Answer:
    """A keyword's reply text, and what to do once the reply is on its way."""

    text: str
    after_reply: Callable[[], None] = lambda: None


def answer(tenant_id: str, inbound) -> Answer | None:
    """The answer to a keyword message (the whole body, any case, trimmed), or None."""
    word = (inbound.body or "").strip().upper()
    if word not in KEYWORDS:
        return None  # most messages: the tenant is not read
    tenant = Tenant.get_by_id(tenant_id)
    number = inbound.sender
    if word in STOP:
        return Answer(
            f"{tenant.name}: you will get no more texts from us. Reply START to resume.",
            lambda: suppressions.suppress(tenant.id, "sms", number, "stop_keyword"),
        )
    if word in START:
        suppressions.lift(tenant.id, "sms", number)
        return Answer(f"{tenant.name}: texts are on again. Reply STOP to stop, HELP for help.")
    if word in HELP:
        return Answer(tenant.help_text or DEFAULT_HELP.format(name=tenant.name))
    return Answer(_confirm(tenant, number))  # CONFIRM


def _confirm(tenant: Tenant, number: str) -> str:
    """Confirm the sender's next appointment within CONFIRM_DAYS; the reply says which, or none."""
    appointment = next_appointment(tenant, number)
    if appointment is None:
        return f"{tenant.name}: we found no upcoming appointment to confirm. Call us to book."
    update_appointment(tenant.id, appointment.id, {"status": "confirmed"})
    when = (
        f"{appointment.scheduled_date:%a %b} {appointment.scheduled_date.day} at {appointment.scheduled_time}"
    )
    return f"{tenant.name}: your appointment on {when} is confirmed. See you then!"


def next_appointment(tenant: Tenant, number: str) -> Appointment | None:
    """The sender's next scheduled or pending appointment from now (the shop's clock) up to
    CONFIRM_DAYS ahead, found by its phone."""
    local = clock.now().replace(tzinfo=ZoneInfo("UTC")).astimezone(ZoneInfo(tenant.timezone))
    today, until, now_time = local.date(), local.date() + timedelta(days=CONFIRM_DAYS), f"{local:%H:%M}"
    candidates = (
        Appointment.for_tenant(tenant.id)
        .where(
            (Appointment.customer_phone == number)
            & Appointment.status.in_(CONFIRMABLE)
            & (Appointment.scheduled_date >= today)
            & (Appointment.scheduled_date <= until)
        )
        .order_by(Appointment.scheduled_date, Appointment.scheduled_time, Appointment.id)
    )
    return next(
        (a for a in candidates if a.scheduled_date > today or a.scheduled_time >= now_time),
        None,
    )

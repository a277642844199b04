"""A shop's appointment messaging settings (reminder rules, quiet hours, customer messages, their
texts): read with their defaults, validated by the fixture's own rules, saved in one transaction."""

from dataclasses import dataclass

import marshmallow as ma

from schemas.fixtures import AppointmentMessagesFixture
from shop.db import locked, write_transaction
from shop.domain.actor import Actor
from shop.domain.appointments import reminders
from shop.models import Tenant
from shop.platform.errors import ApiError
from shop.platform.validation import refuse_unstorable

KEYS = ("reminders", "quiet_hours", "customer_messages", "templates")
PLAN_KEYS = ("reminders", "quiet_hours")  # what a reminder's time depends on
MESSAGE_KINDS = ("confirmation", "reschedule", "cancellation")


@dataclass(frozen=True)
class Saved:
    """What a save did: the settings as stored, and how many future appointments were re-planned."""

    settings: dict
    replanned: int


def current(tenant: Tenant) -> dict:
    """The tenant's four keys with their defaults filled in (absent: no reminders, all off)."""
    booking = tenant.booking or {}
    messages = booking.get("customer_messages") or {}
    return {
        "reminders": [dict(rule) for rule in booking.get("reminders") or []],
        "quiet_hours": list(booking["quiet_hours"]) if booking.get("quiet_hours") else None,
        "customer_messages": {kind: bool(messages.get(kind)) for kind in MESSAGE_KINDS},
        "templates": dict(booking.get("templates") or {}),
    }


def field_errors(error: ma.ValidationError) -> dict[str, str]:
    """marshmallow's nested messages as {"reminders.0.before_minutes": "first message", ...}."""
    found: dict[str, str] = {}

    def walk(path: str, problems) -> None:
        if isinstance(problems, dict):
            for key, inner in problems.items():
                walk(f"{path}.{key}" if path else str(key), inner)
        elif isinstance(problems, list) and problems and not isinstance(problems[0], str):
            for inner in problems:
                walk(path, inner)
        else:
            found.setdefault(path or "form", str(problems[0] if isinstance(problems, list) else problems))

    walk("", error.normalized_messages())
    return found


def validate(body: dict) -> dict:
    """The four keys through the fixture's schema; 400 invalid_field naming the first bad field,
    with every bad field in `details.fields`."""
    try:
        loaded = AppointmentMessagesFixture().load(body)
    except ma.ValidationError as error:
        fields = field_errors(error)
        first = next(iter(fields))
        raise ApiError(400, "invalid_field", f"{first}: {fields[first]}", first, {"fields": fields}) from None
    try:  # a lone surrogate the rules let through: neither backend stores it
        refuse_unstorable(loaded)
    except ApiError as error:
        raise ApiError(
            400, "invalid_field", error.message, error.param, {"fields": {error.param: error.message}}
        )
    return loaded


def update_appointment_settings(tenant_id: str, body: dict, actor: Actor) -> Saved:
    """Validate and store the four booking keys (the others untouched) in one write transaction;
    a change of the rules or quiet hours re-plans the pending reminders of future appointments
    (docs/decisions.md). 422 for a shop without booking settings: writing them would turn booking on."""
    loaded = validate(body)
    with write_transaction():
        tenant = locked(Tenant.select().where(Tenant.id == tenant_id)).first()
        if tenant is None:
            raise ApiError(404, "not_found", f"No tenant {tenant_id}.")
        if tenant.booking is None:
            raise ApiError(
                422,
                "unprocessable",
                "This shop has no appointment booking settings yet; add them (the fixture's booking) first.",
            )
        before = current(tenant)
        stored = {**tenant.booking, **{key: loaded[key] for key in KEYS}}
        Tenant.update(booking=stored).where(Tenant.id == tenant_id).execute()
        tenant.booking = stored
        after, replanned = current(tenant), 0
        if any(before[key] != after[key] for key in PLAN_KEYS):
            replanned = reminders.replan_future(tenant_id, reminders.Settings.of(tenant))
    return Saved(after, replanned)

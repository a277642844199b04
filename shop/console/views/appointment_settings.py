"""Appointment settings (owners only): reminder rules, quiet hours, customer messages and their texts."""

from datetime import timedelta
from types import SimpleNamespace

from flask import g, redirect, request, url_for

from shop import clock
from shop.console import forms, front_office, nav
from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import query_value, render
from shop.domain.appointments import settings, texts
from shop.models import Tenant
from shop.models.appointments import MAX_REMINDER_RULES, TEMPLATE_MAX_LENGTH, TEMPLATE_PLACEHOLDERS
from shop.platform.errors import ApiError

nav.add(nav.NavItem("console.appointment_settings", "Settings", None, owner=True))

UNITS = {"minutes": 1, "hours": 60, "days": 1440}
CHANNELS = {
    "sms,email": "Text message, else email",
    "email,sms": "Email, else text message",
    "sms": "Text message only",
    "email": "Email only",
}
MESSAGES = {
    "confirmation": "Confirm a booking",
    "reschedule": "Tell the customer when an appointment moves",
    "cancellation": "Tell the customer when an appointment is cancelled",
}
TEMPLATES = {
    "reminder": "Reminder",
    "confirmation": "Booking confirmation",
    "reschedule": "Moved notice",
    "cancellation": "Cancellation notice",
}
BEFORE = "Between 5 minutes and 14 days (20,160 minutes) before the appointment."
# every field the form shows a refusal beside (any other refusal is shown above the form)
FIELDS = (
    "reminders",
    *(f"rule{n}_{part}" for n in range(1, MAX_REMINDER_RULES + 1) for part in ("amount", "unit", "channels")),
    "quiet_start",
    "quiet_end",
    *(f"message_{kind}" for kind in MESSAGES),
    *(f"template_{kind}" for kind in TEMPLATES),
)
DONE = {
    "saved": "Saved.",
    "replanned": "Saved. The reminders of upcoming appointments now follow these rules.",
}


@bp.route("/settings/appointments", methods=["GET", "POST"], endpoint="appointment_settings")
@page(owner=True)
def appointment_settings():
    """The form with the saved settings; a post saves them all or shows each refusal beside its field."""
    errors: dict[str, str] = {}
    if request.method == "POST":
        body, rows, errors = _read_form()
        try:
            if errors:
                settings.validate(body)  # the remaining fields' refusals too, all shown at once
            else:
                saved = settings.update_appointment_settings(
                    g.tenant.id, body, front_office.acting("dashboard")
                )
                done = "replanned" if saved.replanned else "saved"
                return redirect(url_for("console.appointment_settings", done=done), 303)
        except ApiError as error:
            if error.status != 400:
                raise
            errors = {**_form_errors(error, rows), **errors}
    return _page(errors, request.form if errors else None)


def _page(errors: dict, typed):
    tenant = g.tenant  # the signed-in session's shop, read with the session
    saved = settings.current(tenant)
    return render(
        "console/appointment_settings.html",
        400 if errors else 200,
        section="console.appointment_settings",
        values=typed if typed is not None else _form_values(saved),
        errors=errors,
        shown=FIELDS,
        rule_rows=range(1, MAX_REMINDER_RULES + 1),
        units=UNITS,
        channels=CHANNELS,
        messages=MESSAGES,
        templates=TEMPLATES,
        placeholders=["{" + name + "}" for name in TEMPLATE_PLACEHOLDERS],
        previews=_previews(tenant, saved),
        timezone=tenant.timezone or "UTC",
        has_booking=tenant.booking is not None,
        max_length=TEMPLATE_MAX_LENGTH,
        before_hint=BEFORE,
        notice=DONE.get(query_value("done", 10) or ""),
    )


def _form_values(saved: dict) -> dict:
    """The saved settings as the form's field values (a rule in the largest whole unit)."""
    values = {}
    for number, rule in enumerate(saved["reminders"], start=1):
        minutes = rule["before_minutes"]
        unit = next(u for u in ("days", "hours", "minutes") if minutes % UNITS[u] == 0)
        values[f"rule{number}_amount"] = str(minutes // UNITS[unit])
        values[f"rule{number}_unit"] = unit
        values[f"rule{number}_channels"] = ",".join(rule["channels"])
    if saved["quiet_hours"]:
        values["quiet_start"], values["quiet_end"] = saved["quiet_hours"]
    for kind, on in saved["customer_messages"].items():
        if on:
            values[f"message_{kind}"] = "on"
    for kind, text in saved["templates"].items():
        values[f"template_{kind}"] = text
    return values


def _read_form() -> tuple[dict, list[int], dict]:
    """The form as the settings' body, the form row of each rule, and the refusals found reading it."""
    errors: dict[str, str] = {}

    def read(name, reader, *args):
        try:
            return reader(name, *args)
        except ApiError as error:
            errors[name] = error.message.split(": ", 1)[-1]
            return None

    rules, rows = [], []
    for number in range(1, MAX_REMINDER_RULES + 1):
        amount = read(f"rule{number}_amount", forms.text, 12, False)
        unit = read(f"rule{number}_unit", forms.one_of, tuple(UNITS), "hours")
        channels = read(f"rule{number}_channels", forms.one_of, tuple(CHANNELS), "sms,email")
        if amount is None:
            continue
        if not amount.isascii() or not amount.isdigit():
            errors[f"rule{number}_amount"] = "A whole number, like 24."
            continue
        if unit and channels:
            rules.append({"before_minutes": int(amount) * UNITS[unit], "channels": channels.split(",")})
            rows.append(number)
    start = read("quiet_start", forms.text, 5, False)
    end = read("quiet_end", forms.text, 5, False)
    if (start is None) != (end is None) and not errors.keys() & {"quiet_start", "quiet_end"}:
        errors["quiet_end" if start else "quiet_start"] = "Give both times, or neither for no quiet hours."
    body = {
        "reminders": rules,
        "quiet_hours": [start, end] if start and end else None,
        "customer_messages": {kind: read(f"message_{kind}", _box) or False for kind in MESSAGES},
        "templates": {},
    }
    for kind in TEMPLATES:
        text = read(f"template_{kind}", forms.text, TEMPLATE_MAX_LENGTH, False)
        if text is not None:
            body["templates"][kind] = text
    return body, rows, errors


def _box(name: str) -> bool:
    """A checkbox: absent is off, "on" is on; anything else (or sent twice) is refused."""
    values = request.form.getlist(name)
    if len(values) > 1 or (values and values[0] != "on"):
        raise ApiError(400, "invalid_field", f"{name}: tick it or leave it.", param=name)
    return bool(values)


def _form_errors(error: ApiError, rows: list[int]) -> dict[str, str]:
    """The settings' refusals ({"reminders.0.before_minutes": ...}) keyed by the form's field names."""
    found = {}
    for path, message in ((error.details or {}).get("fields") or {error.param: error.message}).items():
        parts = (path or "form").split(".")
        if parts[0] == "reminders" and len(parts) > 2 and parts[1].isdigit() and int(parts[1]) < len(rows):
            number = rows[int(parts[1])]
            if parts[2] == "before_minutes":
                found.setdefault(f"rule{number}_amount", BEFORE)
            else:
                found.setdefault(f"rule{number}_channels", message)
        elif parts[0] == "quiet_hours":
            found.setdefault("quiet_start", "Two different times, like 21:00 and 08:00 (24-hour clock).")
        elif parts[0] in ("customer_messages", "templates") and len(parts) > 1:
            prefix = "message" if parts[0] == "customer_messages" else "template"
            found.setdefault(f"{prefix}_{parts[1]}", message)
        else:
            found.setdefault(parts[0], message)
    return found


def _previews(tenant: Tenant, saved: dict) -> dict[str, str]:
    """Each saved text as a text message would read it, for a sample appointment tomorrow at 10:00."""
    sample = SimpleNamespace(
        scheduled_date=clock.now().date() + timedelta(days=1),
        scheduled_time="10:00",
        customer_name="Ann Lee",
        service_id=None,
        tech_id=None,
        service_description=None,
    )
    found = texts.values(sample, tenant.name, tenant.timezone or "UTC", tenant.booking)
    return {kind: texts.render(kind, "sms", found, saved["templates"])[0] for kind in TEMPLATES}

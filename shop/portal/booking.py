"""The online booking page: pick a service, a tech and a day, see the places left, hold a time while
typing one's details, and book it (the API's own slot list, hold and booking functions)."""

from dataclasses import dataclass
from datetime import date, timedelta
from zoneinfo import ZoneInfo

import marshmallow as ma
from flask import current_app, make_response, redirect, render_template, request, url_for
from itsdangerous import BadSignature, URLSafeSerializer

from schemas.appointments import AppointmentCreateSchema, SlotHoldCreateSchema
from shop.domain import actor
from shop.domain.appointments import appointments as appointment_rules
from shop.domain.appointments.holds import HOLD_ID, create_hold, release_hold
from shop.domain.appointments.slots import Booking, booking_of, list_slots, local_today
from shop.models import Appointment, SlotHold, Tenant
from shop.platform.errors import ApiError
from shop.portal import forms, humane
from shop.portal.blueprint import bp, public

DAYS_SHOWN = 14
SLOTS_PER_DAY = 1000
SOURCE = "online_booking"
# why a slot is not offered: the shop is shut then (closed) or its places are taken (full)
FULL_CODES = ("full", "held", "buffer", "tech_busy")
# the details form's fields (the API's create body) with their labels' limits
DETAILS = {"customer_name": 255, "customer_phone": 50, "customer_email": 320, "notes": 1000}
# marshmallow's wording where a customer deserves plainer words
FRIENDLIER = {
    "Missing data for required field.": "Please fill this in.",
    "Field may not be null.": "Please fill this in.",
    "Not a valid email address.": "That is not an email address (it looks like name@example.com).",
}
HOLD_FIELDS = {"date": "date", "time": "time", "service_id": "service", "tech_id": "tech"}


@dataclass
class Shop:
    """A tenant that takes online bookings: its name, settings and wall clock."""

    tenant: Tenant
    booking: Booking
    zone: ZoneInfo

    @property
    def today(self) -> date:
        return local_today(self.zone)

    @property
    def last_day(self) -> date:
        return self.today + timedelta(days=self.booking.max_days_ahead)


def shop_or_404(tenant_id: str) -> Shop:
    """The shop, while its online booking is on (a 404 otherwise, as for a shop that does not exist)."""
    plain = len(tenant_id) <= 64 and tenant_id.isprintable()  # a NUL never reaches a query
    tenant = Tenant.get_or_none(Tenant.id == tenant_id) if plain else None
    booking, zone = booking_of(tenant.id) if tenant else (None, None)
    if tenant is None or tenant.suspended or booking is None or not booking.enabled:
        raise ApiError(404, "not_found", "This shop does not take online bookings.")
    return Shop(tenant, booking, zone)


@bp.route("/book/<tenant_id>", methods=["GET"])
@public
def book(tenant_id: str):
    """Services, techs and days to choose from, and the chosen day's times with places left."""
    shop = shop_or_404(tenant_id)
    choice, errors = _choice(shop, request.args)
    return _choose_page(shop, choice, errors, 400 if errors else 200)


@bp.route("/book/<tenant_id>/hold", methods=["POST"])
@public
def hold(tenant_id: str):
    """Hold the chosen time while the customer types their details (the API's slot hold)."""
    shop = shop_or_404(tenant_id)
    forms.check_not_a_bot(timed=False)
    choice, errors = _choice(shop, request.form)
    time = _one(request.form, "time", 5)
    if not errors and not time:
        errors["time"] = "Choose a time."
    elif not errors and time not in _offered_times(shop, choice):
        errors["time"] = "That time is not free; choose one of the times shown."
    if errors:
        return _choose_page(shop, choice, errors, 400)
    body = {
        "date": choice["date"].isoformat(),
        "time": time,
        "service_id": choice["service"],
        "tech_id": choice["tech"],
    }
    try:
        held = create_hold(shop.tenant.id, SlotHoldCreateSchema().load({k: v for k, v in body.items() if v}))
    except ma.ValidationError as error:
        return _choose_page(shop, choice, _field_errors(error, HOLD_FIELDS), 400)
    except ApiError as error:
        if error.status not in (400, 409):
            raise
        field = HOLD_FIELDS.get(error.param or "time", "time")
        return _choose_page(shop, choice, {field: _slot_refusal(error)}, error.status)
    return redirect(url_for("portal.details", tenant_id=shop.tenant.id, hold_id=held.id), 303)


@bp.route("/book/<tenant_id>/details/<hold_id>", methods=["GET"])
@public
def details(tenant_id: str, hold_id: str):
    """The held time and the form for the customer's name, phone, email and notes."""
    shop = shop_or_404(tenant_id)
    return _details_page(shop, _hold_or_404(shop, hold_id), {}, {}, 200)


@bp.route("/book/<tenant_id>/details/<hold_id>", methods=["POST"])
@public
def details_post(tenant_id: str, hold_id: str):
    """Book the held time with source `online_booking` (the API's create_appointment, event included)."""
    shop = shop_or_404(tenant_id)
    held = _hold_or_404(shop, hold_id)
    forms.check_not_a_bot()
    typed, errors = {}, {}
    for name, limit in DETAILS.items():
        try:
            typed[name] = forms.value(name, limit, multiline=name == "notes")
        except ApiError as error:
            errors[name] = error.message
    if errors:
        return _details_page(shop, held, {k: v or "" for k, v in typed.items()}, errors, 400)
    body = {
        **{k: v for k, v in typed.items() if v is not None},
        "scheduled_date": held.scheduled_date.isoformat(),
        "scheduled_time": held.scheduled_time,
        "hold_id": held.id,
    }
    try:
        loaded = AppointmentCreateSchema().load(body)
    except ma.ValidationError as error:
        return _details_page(shop, held, typed, _field_errors(error, {k: k for k in DETAILS}), 400)
    try:
        booked = appointment_rules.create_appointment(shop.tenant.id, loaded, actor.customer(SOURCE))
    except ApiError as error:
        if error.status >= 500:
            raise
        return _details_page(shop, held, typed, {"form": _slot_refusal(error)}, error.status)
    reference = _confirmations().dumps([shop.tenant.id, booked.id])
    return redirect(url_for("portal.booked", tenant_id=shop.tenant.id, reference=reference), 303)


@bp.route("/book/<tenant_id>/release/<hold_id>", methods=["POST"])
@public
def release(tenant_id: str, hold_id: str):
    """Give the held time back and choose another."""
    shop = shop_or_404(tenant_id)
    held = _hold_or_404(shop, hold_id)
    if held.state == "active":
        release_hold(shop.tenant.id, held.id)
    return redirect(
        url_for("portal.book", tenant_id=shop.tenant.id, date=held.scheduled_date.isoformat()), 303
    )


@bp.route("/book/<tenant_id>/booked/<reference>", methods=["GET"])
@public
def booked(tenant_id: str, reference: str):
    """The confirmation: what was booked, when, on the shop's clock (the link is signed, not guessable)."""
    shop = shop_or_404(tenant_id)
    try:
        owner, appointment_id = _confirmations().loads(reference[:200])
    except (BadSignature, ValueError, TypeError):
        raise ApiError(404, "not_found", "There is no such booking.") from None
    found = Appointment.for_tenant(shop.tenant.id).where(Appointment.id == appointment_id).first()
    if owner != shop.tenant.id or found is None:
        raise ApiError(404, "not_found", "There is no such booking.")
    return _page(
        "portal/booked.html",
        shop,
        appointment=found,
        when=_when(shop, found.scheduled_date, found.scheduled_time),
        service=_service_name(shop, found.service_id),
    )


def _confirmations() -> URLSafeSerializer:
    return URLSafeSerializer(current_app.secret_key, salt="shop.portal.booked")


def _one(values, name: str, max_length: int) -> str | None:
    found = values.getlist(name)
    if len(found) != 1 or not found[0].strip() or len(found[0]) > max_length:
        return None
    return found[0].strip()


def _choice(shop: Shop, values) -> tuple[dict, dict]:
    """The service, tech and day chosen (query or form); a bad one is an error beside its field
    and falls back to its default."""
    errors, booking = {}, shop.booking
    service, tech = _one(values, "service", 40), _one(values, "tech", 40)
    if (
        values.getlist("service")
        and values.get("service")
        and (service is None or booking.service(service) is None)
    ):
        errors["service"], service = "Choose one of the services listed.", None
    if values.getlist("tech") and values.get("tech") and (tech is None or booking.tech(tech) is None):
        errors["tech"], tech = "Choose one of the technicians listed, or anyone.", None
    day = _day(shop, values, errors)
    return {"service": service, "tech": tech, "date": day}, errors


def _day(shop: Shop, values, errors: dict) -> date:
    first_open = next((d for d in _days(shop) if not shop.booking.closed_on(d)), shop.today)
    if not values.get("date"):
        return first_open
    text = _one(values, "date", 10)
    try:
        day = date.fromisoformat(text or "")
    except ValueError:
        errors["date"] = "Choose a day from the list."
        return first_open
    if not shop.today <= day <= min(shop.last_day, shop.today + timedelta(days=DAYS_SHOWN - 1)):
        errors["date"] = "Choose a day from the list (bookings open up to two weeks ahead)."
        return first_open
    return day


def _days(shop: Shop) -> list[date]:
    count = min(DAYS_SHOWN, shop.booking.max_days_ahead + 1)
    return [shop.today + timedelta(days=n) for n in range(count)]


def _choose_page(shop: Shop, choice: dict, errors: dict, status: int):
    listed = list_slots(
        shop.tenant.id, choice["date"], choice["service"], choice["tech"], limit=SLOTS_PER_DAY, explain=True
    )
    slots = [_slot(s) for s in listed["data"] if s.get("time")]
    days = [
        {"date": d, "label": humane.day_label(d, shop.today), "closed": shop.booking.closed_on(d)}
        for d in _days(shop)
    ]
    return _page(
        "portal/book.html",
        shop,
        status,
        choice=choice,
        errors=errors,
        days=days,
        day_label=humane.day_label(choice["date"], shop.today),
        day_closed=bool(listed.get("closed")) or not slots,
        slots=slots,
        any_free=any(s["state"] == "free" for s in slots),
    )


def _offered_times(shop: Shop, choice: dict) -> set[str]:
    """The starts the slot list offers for this choice (the page offers nothing else)."""
    tenant_id, day = shop.tenant.id, choice["date"]
    listed = list_slots(tenant_id, day, choice["service"], choice["tech"], limit=SLOTS_PER_DAY)
    return {slot["time"] for slot in listed["data"] if slot.get("available", True) and slot.get("time")}


def _slot(slot: dict) -> dict:
    """A slot as the page shows it: free (with places left), full, or closed."""
    codes = {r["code"] for r in slot.get("reasons") or []}
    state = "free" if slot["available"] else ("full" if codes & set(FULL_CODES) else "closed")
    return {
        "time": slot["time"],
        "label": humane.time_label(slot["time"]),
        "state": state,
        "left": slot["remaining"],
    }


def _hold_or_404(shop: Shop, hold_id: str) -> SlotHold:
    found = None
    if HOLD_ID.fullmatch(hold_id):
        found = SlotHold.for_tenant(shop.tenant.id).where(SlotHold.id == hold_id).first()
    if found is None:
        raise ApiError(404, "not_found", "This booking link has expired or does not exist.")
    return found


def _details_page(shop: Shop, held: SlotHold, typed: dict, errors: dict, status: int):
    if held.state != "active" and "form" not in errors:
        errors["form"] = "We could not keep this time for you any longer. Please choose a time again."
        status = status if status != 200 else 410
    return _page(
        "portal/details.html",
        shop,
        status,
        held=held,
        live=held.state == "active",
        typed=typed,
        errors=errors,
        when=_when(shop, held.scheduled_date, held.scheduled_time),
        until=humane.local_time_label(held.expires_at, shop.zone),
        service=_service_name(shop, held.service_id),
        tech=_tech_name(shop, held.tech_id),
        started=forms.started_stamp(),
    )


def _when(shop: Shop, day: date, time: str) -> str:
    return f"{humane.day_label(day, shop.today)} at {humane.time_label(time)}"


def _service_name(shop: Shop, service_id: str | None) -> str | None:
    service = shop.booking.service(service_id) if service_id else None
    return service.get("name", service_id) if service else None


def _tech_name(shop: Shop, tech_id: str | None) -> str | None:
    tech = shop.booking.tech(tech_id) if tech_id else None
    return tech.get("name", tech_id) if tech else None


def _field_errors(error: ma.ValidationError, fields: dict) -> dict:
    """marshmallow's messages, each beside the form field it concerns."""
    found = {}
    for name, problems in error.normalized_messages().items():
        message = str(problems[0]) if isinstance(problems, list) and problems else "Not valid."
        found[fields.get(name, "form")] = FRIENDLIER.get(message, message)
    return found


def _slot_refusal(error: ApiError) -> str:
    """A refused hold or booking in a customer's words."""
    if error.code == "slot_unavailable":
        return "Sorry, that time was just taken or is no longer open. Please choose another time."
    return error.message


def _page(template: str, shop: Shop, status: int = 200, **context):
    token = forms.csrf_token()
    html = render_template(
        template, shop=shop, csrf_token=token, zone=shop.zone.key, honeypot=forms.HONEYPOT, **context
    )
    response = make_response(html, status)
    forms.set_csrf_cookie(response, token)
    return response

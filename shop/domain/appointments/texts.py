"""The texts of reminders and customer messages: per-tenant templates or the project's defaults,
with the date and time in the shop's style, and an SMS kept to one segment where it can be."""

from datetime import date

# GSM 03.38's basic character set: a text of only these fits 160 characters in one SMS segment;
# any other character (an emoji, a curly quote) makes the whole text UCS-2, 70 characters a segment
GSM_BASIC = set(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§"
    "¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
GSM_EXTENDED = set("^{}\\[~]|€")  # two characters each
SEGMENT_GSM, SEGMENT_UCS2 = 160, 70

# the defaults, fullest first: an SMS takes the first that fits one segment; an email the first
DEFAULTS = {
    "reminder": (
        "Hi {customer_name}, a reminder from {shop}: your appointment is on {date} at {time}. See you then!",
        "Hi {first_name}, a reminder from {shop}: your appointment is on {date} at {time}.",
        "{shop}: reminder, your appointment is {date} at {time}.",
    ),
    "confirmation": (
        "Hi {customer_name}, {shop} has booked your appointment for {date} at {time}. See you then!",
        "Hi {first_name}, {shop} has booked your appointment for {date} at {time}.",
        "{shop}: you are booked for {date} at {time}.",
    ),
    "reschedule": (
        "Hi {customer_name}, {shop} has moved your appointment to {date} at {time}. See you then!",
        "Hi {first_name}, {shop} has moved your appointment to {date} at {time}.",
        "{shop}: your appointment is moved to {date} at {time}.",
    ),
    "cancellation": (
        "Hi {customer_name}, {shop} has cancelled your appointment on {date} at {time}. "
        "Get in touch to book another time.",
        "Hi {first_name}, {shop} has cancelled your appointment on {date} at {time}.",
        "{shop}: your appointment on {date} at {time} is cancelled.",
    ),
}
SUBJECTS = {
    "reminder": "Reminder: your appointment on {date} at {time}",
    "confirmation": "Booked: your appointment on {date} at {time}",
    "reschedule": "Moved: your appointment is now on {date} at {time}",
    "cancellation": "Cancelled: your appointment on {date} at {time}",
}


def us_style(timezone: str) -> bool:
    """Whether the shop writes dates month first with a 12-hour clock (a shop in the US or Canada's
    zones); elsewhere day first and a 24-hour clock. The tenant has a time zone, not a locale."""
    return timezone.startswith(("America/", "US/", "Canada/")) or timezone == "Pacific/Honolulu"


def format_date(day: date, timezone: str) -> str:
    """Tue, Dec 1 (US style) or Tue 1 Dec."""
    weekday, month = day.strftime("%a"), day.strftime("%b")
    return f"{weekday}, {month} {day.day}" if us_style(timezone) else f"{weekday} {day.day} {month}"


def format_time(hhmm: str, timezone: str) -> str:
    """10:00 AM / 1:30 PM (US style) or 13:30."""
    if not us_style(timezone):
        return hhmm
    hours, minutes = int(hhmm[:2]), hhmm[3:5]
    return f"{(hours % 12) or 12}:{minutes} {'AM' if hours < 12 else 'PM'}"


def sms_segments(text: str) -> int:
    """How many segments an SMS of `text` takes (GSM-7 160/153, else UCS-2 70/67)."""
    if all(c in GSM_BASIC or c in GSM_EXTENDED for c in text):
        length = sum(2 if c in GSM_EXTENDED else 1 for c in text)
        return 1 if length <= SEGMENT_GSM else -(-length // 153)
    units = len(text.encode("utf-16-le")) // 2
    return 1 if units <= SEGMENT_UCS2 else -(-units // 67)


def values(appointment, shop_name: str, timezone: str, booking: dict | None) -> dict:
    """The placeholders' values for one appointment."""
    booking = booking or {}
    day = appointment.scheduled_date
    day = day if isinstance(day, date) else date.fromisoformat(str(day))
    service = next((s for s in booking.get("services") or [] if s.get("id") == appointment.service_id), None)
    tech = next((t for t in booking.get("techs") or [] if t.get("id") == appointment.tech_id), None)
    name = (appointment.customer_name or "").strip()
    return {
        "shop": shop_name,
        "customer_name": name,
        "first_name": name.split()[0] if name else "",
        "date": format_date(day, timezone),
        "time": format_time(appointment.scheduled_time, timezone),
        "service": (service or {}).get("name") or appointment.service_description or "appointment",
        "tech": (tech or {}).get("name") or appointment.tech_id or "our team",
    }


def render(kind: str, channel: str, found: dict, templates: dict | None) -> tuple[str, str | None]:
    """(body, subject) of a `kind` message on `channel`; subject None for SMS."""
    custom = (templates or {}).get(kind)
    subject = SUBJECTS[kind].format_map(found) if channel == "email" else None
    if custom:
        return custom.format_map(found), subject
    forms = [form.format_map(found) for form in DEFAULTS[kind]]
    if channel == "email":
        body = forms[0]
        if found["service"] != "appointment":
            body += f"\n\nService: {found['service']}"
        return f"{body}\n\n{found['shop']}", subject
    for text in forms:
        if sms_segments(text) == 1:
            return text, None
    return forms[-1], None  # a shop name too long for one segment: two then

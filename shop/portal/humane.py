"""Dates and times as people read them, on the shop's wall clock."""

from datetime import date, datetime
from zoneinfo import ZoneInfo


def day_label(day: date, today: date) -> str:
    """`Today, Monday 30 November`, `Tuesday 1 December`, the year only when it is not this one."""
    text = f"{day:%A} {day.day} {day:%B}" + (f" {day.year}" if day.year != today.year else "")
    if day == today:
        return "Today, " + text
    return text


def time_label(hhmm: str) -> str:
    """`09:30` as `9:30 am`, `12:00` as `12:00 pm`."""
    hours, minutes = int(hhmm[:2]), hhmm[3:5]
    suffix = "am" if hours < 12 or hours == 24 else "pm"
    return f"{(hours % 12) or 12}:{minutes} {suffix}"


def local_time_label(moment: datetime, zone: ZoneInfo) -> str:
    """A stored UTC moment as the shop's wall-clock time (`10:42 am`)."""
    local = moment.replace(tzinfo=moment.tzinfo or ZoneInfo("UTC")).astimezone(zone)
    return time_label(f"{local:%H:%M}")


SYMBOLS = {"usd": "$", "cad": "CA$", "aud": "A$", "eur": "€", "gbp": "£"}


def money(cents: int, currency: str) -> str:
    """An amount in minor units as people read it: `$1,234.50`, `12.00 CHF` for a currency without a
    symbol here."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    number = f"{whole:,}.{part:02d}"
    symbol = SYMBOLS.get((currency or "").lower())
    return f"{sign}{symbol}{number}" if symbol else f"{sign}{number} {(currency or '').upper()}"


def moment_label(moment: datetime, zone_name: str | None) -> str:
    """A stored UTC moment on the shop's clock: `27 November 2026 at 4:15 pm`."""
    try:
        zone = ZoneInfo(zone_name or "UTC")
    except (ValueError, KeyError):
        zone = ZoneInfo("UTC")
    local = moment.replace(tzinfo=moment.tzinfo or ZoneInfo("UTC")).astimezone(zone)
    return f"{local.day} {local:%B} {local.year} at {time_label(f'{local:%H:%M}')}"

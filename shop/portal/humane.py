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

"""What a receiver asks of the sender: Retry-After on 429 and 503 (a 410 Gone is the engine's)."""

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from shop import clock

RETRY_AFTER_STATUSES = (429, 503)
MAX_RETRY_AFTER_SECONDS = 24 * 3600


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds a Retry-After value asks for (delta-seconds or an HTTP date), capped at 24 h;
    None when absent or unreadable (the retry table applies)."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(min(int(value[:12]), MAX_RETRY_AFTER_SECONDS))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # an HTTP date is GMT by definition
        when = when.replace(tzinfo=UTC)
    seconds = (when - datetime.fromtimestamp(clock.timestamp(), UTC)).total_seconds()
    return min(max(seconds, 0.0), float(MAX_RETRY_AFTER_SECONDS))


def next_delay(table_delay: float, reply) -> float:
    """The delay before the next attempt: the retry table's, or longer when a 429 or 503 said
    Retry-After (never shorter: the table's backoff still holds)."""
    if reply is None or reply.status not in RETRY_AFTER_STATUSES:
        return table_delay
    asked = retry_after_seconds(_header(reply.headers, "retry-after"))
    return table_delay if asked is None else max(table_delay, asked)


def _header(headers: dict, name: str) -> str | None:
    return next((value for key, value in headers.items() if key.lower() == name), None)

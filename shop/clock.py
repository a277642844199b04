"""The only place that reads the wall clock, so tests can move time."""

import os
import time
from datetime import UTC, datetime, timedelta

# seconds added to the real clock; SHOP_CLOCK_OFFSET lets a consumer process share a test's shift
_offset = float(os.environ.get("SHOP_CLOCK_OFFSET", "0") or 0)


def now() -> datetime:
    """The current UTC time as a naive datetime (how it is stored)."""
    return datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=_offset)


def timestamp() -> float:
    """The current time in seconds since the epoch."""
    return time.time() + _offset


def epoch_ms() -> int:
    """The current time in whole milliseconds since the epoch."""
    return int(timestamp() * 1000)


def advance(seconds: float) -> None:
    """Move this process's clock forward (tests only)."""
    global _offset
    _offset += seconds


def reset() -> None:
    """Undo every advance() (tests only)."""
    global _offset
    _offset = float(os.environ.get("SHOP_CLOCK_OFFSET", "0") or 0)


def isoformat(value: datetime | None) -> str | None:
    """A stored UTC datetime as ISO 8601 with milliseconds and a Z."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.isoformat(timespec="milliseconds") + "Z"

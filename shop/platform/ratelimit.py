"""The per-key token bucket, kept in the database so every serving process shares it."""

import math
from dataclasses import dataclass

from peewee import Case

from shop import clock
from shop.models import RateBucket


@dataclass(frozen=True)
class Take:
    granted: bool
    tokens: float
    capacity: int
    refill: float

    def headers(self) -> dict:
        """RateLimit-* headers (and Retry-After when refused), as the spec's Limits section says."""
        if self.granted:
            reset = math.ceil((self.capacity - self.tokens) / self.refill) if self.refill else 0
            return {
                "RateLimit-Limit": str(self.capacity),
                "RateLimit-Remaining": str(max(0, math.floor(self.tokens))),
                "RateLimit-Reset": str(max(0, reset)),
            }
        wait = str(self.retry_after())
        return {"RateLimit-Limit": str(self.capacity), "RateLimit-Remaining": "0",
                "RateLimit-Reset": wait, "Retry-After": wait}

    def retry_after(self) -> int:
        """Whole seconds until one token is back (at least 1)."""
        if not self.refill:
            return 60
        return max(1, math.ceil((1 - self.tokens) / self.refill))


def take(api_key_id: str, capacity: int, refill: float) -> Take:
    """Take one token from the key's bucket in a single atomic statement."""
    now = clock.timestamp()
    refilled_raw = RateBucket.tokens + (now - RateBucket.updated_at) * refill
    refilled = Case(None, [(refilled_raw > capacity, capacity)], refilled_raw)
    query = (
        RateBucket.update(
            tokens=Case(None, [(refilled >= 1, refilled - 1)], refilled),
            granted=Case(None, [(refilled >= 1, True)], False),
            updated_at=now,
        )
        .where(RateBucket.api_key_id == api_key_id)
        .returning(RateBucket.tokens, RateBucket.granted)
    )
    for _ in range(2):
        rows = list(query.tuples().execute())
        if rows:
            tokens, granted = rows[0]
            return Take(bool(granted), float(tokens), capacity, refill)
        # first request of this key: a full bucket minus this request
        inserted = (
            RateBucket.insert(api_key_id=api_key_id, tokens=capacity - 1, updated_at=now, granted=True)
            .on_conflict_ignore()
            .execute()
        )
        if inserted and capacity >= 1:
            return Take(True, float(capacity - 1), capacity, refill)
    return Take(False, 0.0, capacity, refill)

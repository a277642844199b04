"""The per-key token bucket, kept in the database so every serving process shares it."""

import math
from dataclasses import dataclass

from shop import clock
from shop.db import named_sql, write_sql

# refill, cap at capacity, take one if there is one, and say whether it was taken: one statement,
# so two processes can never both take the last token
_REFILLED = "(tokens + (:now - updated_at) * :refill)"
_CAPPED = f"(CASE WHEN {_REFILLED} > :capacity THEN :capacity ELSE {_REFILLED} END)"


def take_sql(key: str) -> str:
    """The take statement for the bucket of the key `key` names (a parameter or a subquery)."""
    return (
        f"UPDATE rate_bucket SET tokens = CASE WHEN {_CAPPED} >= 1 THEN {_CAPPED} - 1 ELSE {_CAPPED} END, "
        f"granted = ({_CAPPED} >= 1), updated_at = :now "
        f"WHERE api_key_id = {key} RETURNING tokens, granted"
    )


TAKE_SQL = named_sql(take_sql(":key"))
CREATE_SQL = named_sql(
    "INSERT INTO rate_bucket (api_key_id, tokens, updated_at, granted) "
    "VALUES (:key, :capacity, :now, :yes) ON CONFLICT (api_key_id) DO NOTHING"
)


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
        return {
            "RateLimit-Limit": str(self.capacity),
            "RateLimit-Remaining": "0",
            "RateLimit-Reset": wait,
            "Retry-After": wait,
        }

    def retry_after(self) -> int:
        """Whole seconds until one token is back (at least 1)."""
        if not self.refill:
            return 60
        return max(1, math.ceil((1 - self.tokens) / self.refill))


def take_params(capacity: int, refill: float) -> dict:
    """The parameters of the take statement, but the key."""
    return {"now": clock.timestamp(), "refill": refill, "capacity": capacity, "yes": True}


def take(api_key_id: str, capacity: int, refill: float) -> Take:
    """Take one token from the key's bucket in a single atomic statement."""
    params = {**take_params(capacity, refill), "key": api_key_id}
    rows = write_sql(TAKE_SQL, params)
    if not rows:
        # first request of this key: start from a full bucket, then take as usual
        write_sql(CREATE_SQL, params)
        rows = write_sql(TAKE_SQL, params)
    if not rows:  # the row vanished between the two statements: refuse rather than guess
        return Take(False, 0.0, capacity, refill)
    tokens, granted = rows[0]
    return Take(bool(granted), float(tokens), capacity, refill)

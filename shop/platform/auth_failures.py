"""Failed authentications per client address, and the 429 for an address that has too many."""

import threading

from shop import clock
from shop.db import named_sql, run_sql, write_sql

RECORD_SQL = named_sql(
    "INSERT INTO auth_failure (ip, minute, count) VALUES (:ip, :minute, 1) "
    "ON CONFLICT (ip) DO UPDATE SET "
    "count = CASE WHEN auth_failure.minute = :minute THEN auth_failure.count + 1 ELSE 1 END, "
    "minute = :minute RETURNING count"
)
BLOCKED_SQL = named_sql("SELECT ip FROM auth_failure WHERE minute = :minute AND count >= :limit")
# how stale this process's view of other processes' failures may be
REFRESH_SECONDS = 1.0


class BlockedAddresses:
    """The addresses over the limit this minute, as one process sees them.

    Counts live in the database, so every process adds to the same tally. Each process keeps the
    set of blocked addresses and re-reads it at most once a second, which saves a query on every
    request; a failure counted here blocks its address here at once.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._key = None  # (minute, limit) the set was read for
        self._read_at = 0.0
        self._blocked: set[str] = set()

    def is_blocked(self, ip: str, limit: int) -> bool:
        now = clock.timestamp()
        key = (int(now // 60), limit)
        with self._lock:
            if key != self._key or now - self._read_at >= REFRESH_SECONDS:
                rows = run_sql(BLOCKED_SQL, {"minute": key[0], "limit": limit})
                self._key, self._read_at, self._blocked = key, now, {row[0] for row in rows}
            return ip in self._blocked

    def record(self, ip: str, limit: int) -> None:
        minute = int(clock.timestamp() // 60)
        count = write_sql(RECORD_SQL, {"ip": ip, "minute": minute})[0][0]
        if count >= limit:
            with self._lock:
                if self._key == (minute, limit):
                    self._blocked.add(ip)


def retry_after() -> int:
    """Seconds until the current minute is over (at least 1)."""
    now = clock.timestamp()
    return max(1, int((now // 60 + 1) * 60 - now) + 1)


blocked_addresses = BlockedAddresses()

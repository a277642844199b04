"""The usage log: one row per logged request, written in small batches by a background thread.

A row per request written inline would take SQLite's write lock a second time on every request,
and under two workers the contention halves throughput (docs/performance.md). Rows are buffered
per process and written together every FLUSH_SECONDS; a usage report flushes its own process's
buffer first. A process killed without warning loses at most that interval of usage rows.
"""

import atexit
import logging
import threading

from shop.db import db, driver_sql, named_sql, on_postgres, write_transaction

log = logging.getLogger("shop.usage")
FLUSH_SECONDS = 0.1
MAX_BUFFERED = 10_000  # beyond this, rows are dropped (and said so) rather than grow without bound
INSERT_SQL = named_sql(
    "INSERT INTO usage_log (tenant_id, api_key_id, method, path, status, duration_ms, created_ms) "
    "VALUES (:tenant, :key, :method, :path, :status, :duration, :created)"
)
# on PostgreSQL a batch goes in as one COPY: a row costs about 2.5 us there against 19 us as one
# INSERT of an executemany (client and server; docs/performance.md, "The usage log on PostgreSQL")
COPY_SQL = "COPY usage_log (tenant_id, api_key_id, method, path, status, duration_ms, created_ms) FROM STDIN"
FIELDS = ("tenant", "key", "method", "path", "status", "duration", "created")


class UsageBuffer:
    """Rows waiting to be written, and the thread that writes them."""

    def __init__(self):
        self._rows: list[dict] = []
        self._lock = threading.Lock()
        # held from taking the rows until they are committed, so a report's flush waits for a
        # write the background thread has in flight instead of reading before it commits
        self._writing = threading.Lock()
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()

    def add(self, row: dict) -> None:
        with self._lock:
            if len(self._rows) >= MAX_BUFFERED:
                log.warning("usage buffer full; dropping a usage row")
                return
            self._rows.append(row)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="usage-log", daemon=True)
                self._thread.start()

    def flush(self) -> int:
        """Write every buffered row in one transaction; returns how many."""
        with self._writing:
            with self._lock:
                rows, self._rows = self._rows, []
            if not rows:
                return 0
            try:
                with write_transaction():
                    write_rows(rows)
            except Exception:  # a lost usage row must never fail the requests it describes
                log.warning("usage log write of %d rows failed", len(rows), exc_info=True)
                return 0
            return len(rows)

    def _run(self) -> None:
        while True:
            self._wake.wait(FLUSH_SECONDS)
            self.flush()


def write_rows(rows: list[dict]) -> None:
    """Insert the rows (inside the caller's transaction): one COPY on PostgreSQL, else executemany."""
    if not on_postgres():
        db.cursor().executemany(driver_sql(INSERT_SQL), rows)
        return
    with db.cursor().copy(COPY_SQL) as copy:
        for row in rows:
            copy.write_row(tuple(row[field] for field in FIELDS))


buffer = UsageBuffer()
atexit.register(buffer.flush)

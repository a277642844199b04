"""Usage reports: the calling key's logged requests rolled up over a window."""

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from peewee import Case, DatabaseError, OperationalError, fn

from shop import clock
from shop.db import db, on_postgres
from shop.models import ApiKey, UsageLog
from shop.platform import usage_log
from shop.platform.errors import ApiError

log = logging.getLogger("shop.usage")
DAY_MS = 86_400_000
MAX_EPOCH_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z


@dataclass(frozen=True)
class UsageQuery:
    since: int
    until: int
    by_key: bool
    limit: int


def _int_param(args, name: str, low: int, high: int) -> int | None:
    """An integer query value within bounds, or None when absent or malformed."""
    values = args.getlist(name)
    if len(values) != 1:
        return None
    text = values[0].strip()
    digits = text.removeprefix("-")
    # ASCII only: "²".isdigit() is true but int("²") raises, and "١" is no digit a client means
    if not (digits.isascii() and digits.isdigit()) or len(text) > 20:
        return None
    value = int(text)
    return value if low <= value <= high else None


def resolve_query(args) -> UsageQuery:
    """The window and options; a malformed value is ignored and its default applies."""
    until = _int_param(args, "until", 0, MAX_EPOCH_MS)
    until = clock.epoch_ms() if until is None else until
    since = _int_param(args, "since", 0, MAX_EPOCH_MS)
    if since is None:
        days = _int_param(args, "window_days", 1, 36_500) or 30
        since = max(0, until - days * DAY_MS)
    limit = _int_param(args, "limit", 1, 10**9)
    limit = 100 if limit is None else min(limit, 1000)
    by_key = args.getlist("by_key") in (["true"], ["1"])
    return UsageQuery(since, until, by_key, limit)


def _iso_ms(ms: int) -> str:
    return clock.isoformat(datetime.fromtimestamp(ms / 1000, UTC))


def _status_class(low: int, high: int):
    return fn.SUM(Case(None, [((UsageLog.status >= low) & (UsageLog.status <= high), 1)], 0))


def _rollup_row(key_id: str, since: int, until: int) -> tuple:
    other = (
        (UsageLog.status < 200)
        | ((UsageLog.status >= 300) & (UsageLog.status < 400))
        | (UsageLog.status >= 600)
    )
    query = UsageLog.select(
        fn.COUNT(UsageLog.id),
        _status_class(200, 299),
        _status_class(400, 499),
        _status_class(500, 599),
        fn.SUM(Case(None, [(other, 1)], 0)),
        fn.SUM(UsageLog.duration_ms),
        fn.MAX(UsageLog.duration_ms),
    ).where((UsageLog.api_key_id == key_id) & (UsageLog.created_ms >= since) & (UsageLog.created_ms < until))
    return query.tuples().get()


class _Budget:
    """Interrupts a query that runs past its time budget: SQLite's progress handler, or PostgreSQL's
    statement_timeout for the one transaction of the rollup."""

    def __init__(self, budget_ms: float):
        self.budget_ms = budget_ms
        self.deadline = time.monotonic() + budget_ms / 1000
        self.exceeded = False
        self._transaction = None

    def __call__(self) -> int:
        self.exceeded = time.monotonic() > self.deadline
        return 1 if self.exceeded else 0

    def __enter__(self):
        if on_postgres():
            return self._enter_postgres()
        connection = db.connection()
        if hasattr(connection, "set_progress_handler"):
            connection.set_progress_handler(self, 200)
        return self

    def _enter_postgres(self):
        if self.budget_ms < 1:  # statement_timeout counts whole milliseconds, and 0 means none
            self.exceeded = True
            raise OperationalError("no time budget for the usage rollup")
        self._transaction = db.atomic()
        self._transaction.__enter__()
        db.execute_sql("SELECT set_config('statement_timeout', %s, true)", (f"{int(self.budget_ms)}ms",))
        return self

    def __exit__(self, *exc):
        if self._transaction is not None:
            self.exceeded = exc[0] is not None and time.monotonic() >= self.deadline
            return self._transaction.__exit__(*exc)
        connection = db.connection()
        if hasattr(connection, "set_progress_handler"):
            connection.set_progress_handler(None, 0)
        return False


def report(key: ApiKey, query: UsageQuery, budget_ms: float) -> dict:
    """The api_usage object for the calling key only."""
    usage_log.buffer.flush()  # this process's latest rows count too
    budget = _Budget(budget_ms)
    try:
        with budget:
            row = _rollup_row(key.id, query.since, query.until)
    except OperationalError:
        if budget.exceeded:
            raise ApiError(
                504,
                "api_usage_timeout",
                "The usage rollup exceeded its time budget; retry with a shorter window.",
            )
        log.warning("usage log unreadable", exc_info=True)
        return _usage(key, None, (0,) * 7, query)
    except DatabaseError:
        log.warning("usage log unreadable", exc_info=True)
        return _usage(key, None, (0,) * 7, query)
    return _usage(key, (query.since, query.until), row, query)


def _usage(key: ApiKey, window, row: tuple, query: UsageQuery) -> dict:
    total, ok, client, server, other, duration_total, duration_max = (value or 0 for value in row)
    errors = client + server
    rate = round(errors / total, 4) if total else 0
    avg = round(duration_total / total) if total else 0
    body = {
        "object": "api_usage",
        "tenant_id": key.tenant_id,
        "window": {
            "since": _iso_ms(window[0]) if window else None,
            "until": _iso_ms(window[1]) if window else None,
        },
        "total_requests": total,
        "by_status_class": {"2xx": ok, "4xx": client, "5xx": server, "other": other},
        "error_count": errors,
        "error_rate": rate,
        "duration_ms": {"total": duration_total, "avg": avg, "max": duration_max},
        "distinct_keys": 1 if total else 0,
    }
    if query.by_key:
        entry = {
            "api_key_id": key.id,
            "total_requests": total,
            "error_count": errors,
            "error_rate": rate,
            "avg_duration_ms": avg,
        }
        body["by_key"] = [entry][: query.limit] if total else []
    return body


def daily(key: ApiKey, days: int, budget_ms: float) -> list[dict]:
    """Per UTC day, oldest first, today included: requests, error rate (report()'s) and p95 latency."""
    today = clock.epoch_ms() // DAY_MS * DAY_MS
    series = []
    for back in range(days - 1, -1, -1):
        since = today - back * DAY_MS
        body = report(key, UsageQuery(since, since + DAY_MS, False, 1), budget_ms)
        series.append(
            {
                "day": _iso_ms(since)[:10],
                "requests": body["total_requests"],
                "error_rate": body["error_rate"],
                "p95_ms": _percentile_ms(key.id, since, since + DAY_MS, body["total_requests"], 0.95),
            }
        )
    return series


def _percentile_ms(key_id: str, since: int, until: int, total: int, fraction: float) -> int | None:
    """The nearest-rank percentile of duration_ms over the key's logged requests in [since, until)."""
    if not total:
        return None
    rank = max(1, -(-int(total * fraction * 1000) // 1000))  # ceil without floats drifting
    window = (UsageLog.api_key_id == key_id) & (UsageLog.created_ms >= since) & (UsageLog.created_ms < until)
    query = UsageLog.select(UsageLog.duration_ms).where(window).order_by(UsageLog.duration_ms)
    return query.offset(rank - 1).limit(1).scalar()

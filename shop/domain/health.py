"""Health: the database and the queue answer, a consumer beats, and no work is overdue."""

import logging
from datetime import datetime

from shop import clock
from shop.config import sms_provider
from shop.db import db
from shop.domain import backlog, heartbeat
from shop.queue import huey

log = logging.getLogger("shop.health")

# the checks whose failure makes the service unable to answer (503); the others only degrade it
VITAL = ("database", "queue")


def check() -> dict:
    """'ok' or 'unavailable' for the database and the queue."""
    return {"database": _probe(_database), "queue": _probe(_queue)}


def report(config) -> dict:
    """The whole health report: every check's verdict, the consumers' heartbeat and the backlog."""
    checks = check()
    body = {"object": "health", "status": "ok", "checks": checks, "messaging": messaging(config)}
    try:
        if checks["database"] == "ok":
            return _work(body, config)
    except Exception:  # the database answered SELECT 1 but not these: say so, never a 500
        log.warning("health: the heartbeat or backlog query failed", exc_info=True)
        body.pop("consumer", None), body.pop("backlog", None)
        body["status"] = "degraded"
    checks.update(consumer="unknown", webhook_deliveries="unknown", messages="unknown")
    return body


LOG_PROVIDER = "log provider"


def messaging(config) -> dict:
    """Which provider sends each channel: `log provider` when none is configured (nothing leaves
    the machine; such messages read delivery_status `logged`)."""
    return {
        "sms": sms_provider(config) if sms_provider(config) != "log" else LOG_PROVIDER,
        "email": "smtp" if config.get("SMTP_URL") else LOG_PROVIDER,
    }


def unavailable(body: dict) -> bool:
    """Whether a vital check failed: the service cannot answer (503), not merely degraded."""
    return any(body["checks"][name] != "ok" for name in VITAL)


def _work(body: dict, config) -> dict:
    """Add the consumers' heartbeat and the backlog to the report, with their verdicts."""
    checks = body["checks"]
    stale_after = float(config["HEALTH_HEARTBEAT_STALE_SECONDS"])
    overdue_after = float(config["HEALTH_OVERDUE_SECONDS"])
    now = clock.now()
    body["consumer"] = _consumer(heartbeat.consumers(stale_after), stale_after, now)
    body["backlog"] = {
        "webhook_deliveries": _backlog(backlog.oldest_due_delivery(now), overdue_after, now),
        "messages": _backlog(backlog.oldest_due_message(now), overdue_after, now),
    }
    checks["consumer"] = body["consumer"].pop("verdict")
    for name in ("webhook_deliveries", "messages"):
        checks[name] = body["backlog"][name].pop("verdict")
    if any(value != "ok" for value in checks.values()):
        body["status"] = "degraded"
    return body


def _consumer(consumers: heartbeat.Consumers, stale_after: float, now: datetime) -> dict:
    """The heartbeat part of the report, with its verdict: ok, stale (none recent), missing (none
    ever), or no_periodic (consumers run, but none runs the sweeps that recover lost work)."""
    last = consumers.last_beat_at
    verdict = "ok" if consumers.running else ("stale" if last else "missing")
    if consumers.running and not consumers.periodic:
        verdict = "no_periodic"
    return {
        "verdict": verdict,
        "running": consumers.running,
        "running_periodic": consumers.periodic,
        "last_heartbeat_at": clock.isoformat(last),
        "last_heartbeat_age_seconds": backlog.age(last, now),
        "stale_after_seconds": stale_after,
    }


def _backlog(oldest_due: datetime | None, overdue_after: float, now: datetime) -> dict:
    """One kind of work's oldest due item, with its verdict: overdue past the threshold."""
    age = backlog.age(oldest_due, now)
    return {
        "verdict": "overdue" if age is not None and age > overdue_after else "ok",
        "oldest_due_at": clock.isoformat(oldest_due),
        "oldest_due_age_seconds": age,
        "overdue_after_seconds": overdue_after,
    }


def _probe(probe) -> str:
    try:
        probe()
        return "ok"
    except Exception:
        log.warning("health probe %s failed", probe.__name__, exc_info=True)
        return "unavailable"


def _database() -> None:
    db.execute_sql("SELECT 1").fetchone()


def _queue() -> None:
    huey.storage.probe()

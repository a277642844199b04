"""Health checks of the database and the task queue."""

import logging

from shop.db import db
from shop.queue import huey

log = logging.getLogger("shop.health")


def check() -> dict:
    """'ok' or 'unavailable' for the database and the queue."""
    return {"database": _probe(_database), "queue": _probe(_queue)}


def _probe(fn) -> str:
    try:
        fn()
        return "ok"
    except Exception:
        log.warning("health probe %s failed", fn.__name__, exc_info=True)
        return "unavailable"


def _database() -> None:
    db.execute_sql("SELECT 1").fetchone()


def _queue() -> None:
    huey.storage.probe()

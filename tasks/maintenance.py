"""Periodic housekeeping: expired idempotency records and old usage rows."""

from huey import crontab

from shop.domain import usage
from shop.platform import idempotency
from shop.queue import huey, settings


@huey.periodic_task(crontab(minute="*/15"))
def prune_idempotency_records() -> int:
    """Drop idempotency records past their 24-hour retention."""
    return idempotency.prune(float(settings()["IDEMPOTENCY_RETENTION_SECONDS"]))


@huey.periodic_task(crontab(minute="7", hour="3"))
def prune_usage_log() -> int:
    """Drop usage rows past the retention window."""
    return usage.prune(int(settings()["USAGE_RETENTION_DAYS"]))

"""Periodic housekeeping: rows past their retention windows go, in small batches (domain/retention)."""

from huey import crontab

from shop.domain import retention
from shop.queue import huey, patient, settings


@huey.periodic_task(crontab(minute="*/15"))
@patient
def prune_idempotency_records() -> int:
    """Drop idempotency records past their retention (the 24-hour replay window by default)."""
    windows = retention.windows(settings())
    return sum(retention.prune_idempotency(windows.idempotency, windows.batch_size))


@huey.periodic_task(crontab(minute="7", hour="3"))
@patient
def prune_usage_log() -> int:
    """Drop usage rows past their retention window (90 days by default)."""
    windows = retention.windows(settings())
    return sum(retention.prune_usage(windows.usage, windows.batch_size))


@huey.periodic_task(crontab(minute="37"))
@patient
def prune_webhook_deliveries() -> int:
    """Drop terminal deliveries (with their attempt logs) past their window, then their orphaned events."""
    windows = retention.windows(settings())
    deliveries = sum(retention.prune_deliveries(windows.deliveries, windows.batch_size))
    return deliveries + sum(retention.prune_events(windows.deliveries, windows.batch_size))


@huey.periodic_task(crontab(minute="*/15"))
def prune_auth_failures() -> int:
    """Drop the failed-authentication tallies of past minutes (only the current minute counts)."""
    return sum(retention.prune_auth_failures(retention.windows(settings()).batch_size))

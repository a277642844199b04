"""Retention: rows past their window are deleted in small transactions (tasks/maintenance.py runs it).

What goes: terminal webhook deliveries with their attempt logs (and the events no delivery refers
to any more), usage rows, idempotency records, the failed-authentication tallies of past minutes.
Each batch is its own short write transaction, so the SQLite write lock is never held for long and
other writers get in between batches.
"""

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from peewee import fn

from shop import clock
from shop.db import locked, write_transaction
from shop.models import (
    AuthFailure,
    Event,
    IdempotencyRecord,
    UsageLog,
    WebhookDelivery,
    WebhookDeliveryAttempt,
)
from shop.models.webhooks import TERMINAL

DEFAULT_DELIVERY_DAYS = 30
DEFAULT_USAGE_DAYS = 90
DEFAULT_BATCH_SIZE = 1000
# the floors are what the spec reads back: 7 days of deliveries and attempts (auto-disable, the 7d
# stats), the usage report's default 30-day window, and the 24-hour idempotent replay
MIN_DELIVERY_DAYS = 7
MIN_USAGE_DAYS = 30
# a writer waiting at the gate gets in before the next batch takes the lock again
PAUSE_BETWEEN_BATCHES = 0.01


class RetentionError(ValueError):
    """A retention setting that is not a number or is below what the spec keeps."""


@dataclass(frozen=True)
class Windows:
    deliveries: timedelta
    usage: timedelta
    idempotency: timedelta
    batch_size: int


def _number(config, name: str, default: float, minimum: float, unit: str) -> float:
    """A positive number setting, refused below its minimum (the message names SHOP_<name>)."""
    value = config.get(name)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RetentionError(f"SHOP_{name} must be a number of {unit}, not {value!r}") from None
    if isinstance(value, bool) or not number >= minimum:
        raise RetentionError(f"SHOP_{name} must be at least {minimum:g} {unit}, not {value!r}")
    return number


def windows(config) -> Windows:
    """The retention windows of a configuration; RetentionError names a bad setting."""
    replay_hours = float(config.get("IDEMPOTENCY_RETENTION_SECONDS", 24 * 3600)) / 3600
    # SHOP_USAGE_RETENTION_DAYS is the setting's name before the SHOP_RETENTION_* family
    usage_name = "RETENTION_USAGE_DAYS" if config.get("RETENTION_USAGE_DAYS") else "USAGE_RETENTION_DAYS"
    batch = _number(config, "RETENTION_BATCH_SIZE", DEFAULT_BATCH_SIZE, 1, "rows")
    if batch != int(batch):
        raise RetentionError(f"SHOP_RETENTION_BATCH_SIZE must be a whole number of rows, not {batch:g}")
    return Windows(
        deliveries=timedelta(
            days=_number(config, "RETENTION_DELIVERY_DAYS", DEFAULT_DELIVERY_DAYS, MIN_DELIVERY_DAYS, "days")
        ),
        usage=timedelta(days=_number(config, usage_name, DEFAULT_USAGE_DAYS, MIN_USAGE_DAYS, "days")),
        idempotency=timedelta(
            hours=_number(config, "RETENTION_IDEMPOTENCY_HOURS", replay_hours, replay_hours, "hours")
        ),
        batch_size=int(batch),
    )


def in_batches(next_batch, batch_size: int) -> Iterator[int]:
    """Run `next_batch(batch_size)` (one transaction, rows deleted) until a batch comes up short."""
    while True:
        with write_transaction():
            deleted = next_batch(batch_size)
        yield deleted
        if deleted < batch_size:
            return
        time.sleep(PAUSE_BETWEEN_BATCHES)


def prune_deliveries(window: timedelta, batch_size: int) -> Iterator[int]:
    """Delete terminal deliveries untouched for `window`, their attempts with them; per batch, how many."""
    cutoff = clock.now() - window

    def batch(size: int) -> int:
        # in id order, as every transaction takes several deliveries' rows, and passing over any
        # that another transaction holds (a recovery, a redeliver): the next run takes them, and a
        # background prune never waits for, nor holds up, the work that matters now
        # (docs/decisions.md, "Lock order")
        finished = (
            WebhookDelivery.select(WebhookDelivery.id)
            .where(WebhookDelivery.status.in_(TERMINAL) & (WebhookDelivery.updated_at < cutoff))
            .order_by(WebhookDelivery.id)
            .limit(size)
        )
        ids = [row[0] for row in locked(finished, "UPDATE SKIP LOCKED").tuples()]
        if ids:
            WebhookDeliveryAttempt.delete().where(WebhookDeliveryAttempt.delivery.in_(ids)).execute()
            WebhookDelivery.delete().where(WebhookDelivery.id.in_(ids)).execute()
        return len(ids)

    return in_batches(batch, batch_size)


def prune_events(window: timedelta, batch_size: int) -> Iterator[int]:
    """Delete events older than `window` that no delivery refers to any more; per batch, how many."""
    cutoff = clock.now() - window
    referred = WebhookDelivery.select(WebhookDelivery.id).where(WebhookDelivery.event == Event.id)

    return _prune_by_id(Event, (Event.created < cutoff) & ~fn.EXISTS(referred), batch_size)


def prune_usage(window: timedelta, batch_size: int) -> Iterator[int]:
    """Delete usage rows older than `window`; per batch, how many."""
    cutoff_ms = clock.epoch_ms() - int(window.total_seconds() * 1000)
    return _prune_by_id(UsageLog, UsageLog.created_ms < cutoff_ms, batch_size)


def prune_idempotency(window: timedelta, batch_size: int) -> Iterator[int]:
    """Delete idempotency records older than `window`; per batch, how many."""
    cutoff: datetime = clock.now() - window
    return _prune_by_id(IdempotencyRecord, IdempotencyRecord.created_at < cutoff, batch_size)


def prune_auth_failures(batch_size: int) -> Iterator[int]:
    """Delete the failure tallies of addresses whose last failure was before the previous minute
    (only the current minute's count is ever read); per batch, how many."""
    stale = AuthFailure.minute < int(clock.timestamp() // 60) - 1

    def batch(size: int) -> int:
        ips = [row[0] for row in AuthFailure.select(AuthFailure.ip).where(stale).limit(size).tuples()]
        # the condition again: an address that failed again since the SELECT has a fresh tally
        return AuthFailure.delete().where(AuthFailure.ip.in_(ips) & stale).execute() if ips else 0

    return in_batches(batch, batch_size)


def _prune_by_id(model, condition, batch_size: int) -> Iterator[int]:
    def batch(size: int) -> int:
        ids = [row[0] for row in model.select(model.id).where(condition).limit(size).tuples()]
        return model.delete().where(model.id.in_(ids)).execute() if ids else 0

    return in_batches(batch, batch_size)

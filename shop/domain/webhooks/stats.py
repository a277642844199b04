"""An endpoint's health over a window, from the attempt log: counts, success rate, latency."""

from datetime import timedelta

from peewee import fn

from shop import clock
from shop.domain.webhooks.subscriptions import get_subscription_or_404
from shop.models import WebhookDeliveryAttempt
from shop.models.base import UTCDateTimeField

WINDOWS = {"24h": timedelta(hours=24), "7d": timedelta(days=7)}
Attempt = WebhookDeliveryAttempt
FAILED = ("failed", "interrupted")


def endpoint_stats(tenant_id: str, subscription_id: str, window: str) -> dict:
    """Attempts started in the window: per outcome, the success rate, p50/p95 and the latest of each.

    Every query reads the (subscription, started_at, status, duration_ms) index only.
    """
    sub = get_subscription_or_404(tenant_id, subscription_id)
    until = clock.now()
    since = until - WINDOWS[window]
    in_window = (Attempt.subscription == sub.id) & Attempt.started_at.between(since, until)
    rows = (
        Attempt.select(Attempt.status, fn.COUNT(Attempt.id), fn.MAX(Attempt.started_at))
        .where(in_window)
        .group_by(Attempt.status)
        .tuples()
    )
    counts, latest = {}, {}
    for status, count, last in rows:
        counts[status], latest[status] = count, UTCDateTimeField().python_value(last)
    delivered = counts.get("succeeded", 0)
    failed = sum(counts.get(status, 0) for status in FAILED)
    timed = in_window & Attempt.duration_ms.is_null(False) & Attempt.status.in_(("succeeded", "failed"))
    return {
        "subscription_id": sub.id,
        "window": window,
        "since": since,
        "until": until,
        "attempts": sum(counts.values()),
        "delivered": delivered,
        "failed": failed,
        "success_rate": round(delivered / (delivered + failed), 4) if delivered + failed else None,
        "p50_response_ms": _percentile(timed, 0.50),
        "p95_response_ms": _percentile(timed, 0.95),
        "last_success_at": latest.get("succeeded"),
        "last_failure_at": max((latest[s] for s in FAILED if s in latest), default=None),
    }


def _percentile(condition, fraction: float) -> int | None:
    """The nearest-rank percentile of duration_ms over the attempts matching `condition`."""
    total = Attempt.select(fn.COUNT(Attempt.id)).where(condition).scalar()
    if not total:
        return None
    rank = max(1, -(-int(total * fraction * 1000) // 1000))  # ceil(total * fraction) without floats drifting
    return (
        Attempt.select(Attempt.duration_ms)
        .where(condition)
        .order_by(Attempt.duration_ms)
        .offset(rank - 1)
        .limit(1)
        .scalar()
    )

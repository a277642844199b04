"""The deliveries of a subscription as the API shows them: list, one, its attempts, summary, redeliver."""

import re

from peewee import fn

from shop import clock
from shop.db import write_transaction
from shop.domain.events import outbox
from shop.domain.webhooks.subscriptions import get_subscription_or_404
from shop.models import WebhookDelivery, WebhookDeliveryAttempt, WebhookSubscription
from shop.models.webhooks import DELIVERY_STATUSES, IN_FLIGHT
from shop.platform.errors import ApiError, not_found
from shop.platform.pagination import paginate

DELIVERY_ID = re.compile(r"whd_[A-Za-z0-9_-]{8,34}")  # the form the OpenAPI document gives
ORDER = [(WebhookDelivery.created_at, True), (WebhookDelivery.id, True)]
ATTEMPT_ORDER = [(WebhookDeliveryAttempt.started_at, False), (WebhookDeliveryAttempt.id, False)]


def list_deliveries(
    tenant_id: str, subscription_id: str, limit: int, cursor: str | None, status: str | None = None
) -> dict:
    """A subscription's deliveries, newest first; `status` keeps one status (the console's filter)."""
    sub = get_subscription_or_404(tenant_id, subscription_id)
    query = WebhookDelivery.for_tenant(tenant_id).where(WebhookDelivery.subscription == sub.id)
    if status is not None:
        if status not in DELIVERY_STATUSES:
            raise ApiError(
                400, "invalid_field", f"status: one of {', '.join(DELIVERY_STATUSES)}.", param="status"
            )
        query = query.where(WebhookDelivery.status == status)
    return paginate(query, ORDER, limit, cursor).envelope()


def subscription_and_delivery(
    tenant_id: str, subscription_id: str, delivery_id: str, lock: bool = False
) -> tuple[WebhookSubscription, WebhookDelivery]:
    """A delivery of this tenant's live subscription with it, else 404 (another's looks missing);
    `lock` locks the subscription for the caller's write transaction."""
    sub = get_subscription_or_404(tenant_id, subscription_id, lock=lock)
    delivery = None
    if DELIVERY_ID.fullmatch(delivery_id):  # anything else (a NUL, another kind of id) is no delivery
        delivery = (
            WebhookDelivery.for_tenant(tenant_id)
            .where((WebhookDelivery.subscription == sub.id) & (WebhookDelivery.id == delivery_id))
            .first()
        )
    if delivery is None:
        raise not_found("webhook delivery", delivery_id, "delivery_id")
    return sub, delivery


def get_delivery(tenant_id: str, subscription_id: str, delivery_id: str) -> WebhookDelivery:
    """One delivery of a subscription."""
    return subscription_and_delivery(tenant_id, subscription_id, delivery_id)[1]


def list_attempts(tenant_id: str, subscription_id: str, delivery_id: str, limit: int, cursor: str | None):
    """A delivery's attempt log, oldest first (records; the schema dumps them)."""
    delivery = get_delivery(tenant_id, subscription_id, delivery_id)
    query = WebhookDeliveryAttempt.for_tenant(tenant_id).where(WebhookDeliveryAttempt.delivery == delivery.id)
    return paginate(query, ATTEMPT_ORDER, limit, cursor).envelope()


def summary(tenant_id: str, subscription_id: str) -> dict:
    """Counts per status, with pending = pending + retrying, and the latest delivery and attempt."""
    sub = get_subscription_or_404(tenant_id, subscription_id)
    columns = (
        WebhookDelivery.status,
        fn.COUNT(WebhookDelivery.id),
        fn.MAX(WebhookDelivery.delivered_at),
        fn.MAX(WebhookDelivery.last_attempt_at),
    )
    rows = (
        WebhookDelivery.select(*columns)
        .where(WebhookDelivery.subscription == sub.id)
        .group_by(WebhookDelivery.status)
        .tuples()
    )
    counts = dict.fromkeys(DELIVERY_STATUSES, 0)
    delivered_at, attempted_at = [], []
    for status, count, last_delivered, last_attempt in rows:
        counts[status] = count
        delivered_at += [last_delivered] if last_delivered else []
        attempted_at += [last_attempt] if last_attempt else []
    return {
        "object": "webhook_delivery_summary",
        "subscription_id": sub.id,
        "total": sum(counts.values()),
        "counts": counts,
        "pending": counts["pending"] + counts["retrying"],
        "last_delivered_at": _latest(delivered_at),
        "last_attempt_at": _latest(attempted_at),
    }


def _latest(stamps: list) -> str | None:
    """The latest of stored timestamps (aggregates come back as text) in the API's form."""
    if not stamps:
        return None
    return clock.isoformat(max(WebhookDelivery.delivered_at.python_value(stamp) for stamp in stamps))


def redeliver(tenant_id: str, subscription_id: str, delivery_id: str) -> WebhookDelivery:
    """Queue a finished delivery again: same payload and event id, attempt counter reset."""
    with write_transaction():
        sub, delivery = subscription_and_delivery(tenant_id, subscription_id, delivery_id, lock=True)
        if delivery.status in IN_FLIGHT:
            raise ApiError(422, "delivery_in_flight", "This delivery is still pending or retrying.")
        if not sub.enabled:
            raise ApiError(422, "subscription_disabled", "This subscription is disabled; enable it first.")
        now = clock.now()
        delivery.status, delivery.attempts, delivery.next_attempt_at = "pending", 0, now
        delivery.claimed_until, delivery.updated_at, delivery.run_trigger = None, now, "redeliver"
        delivery.save()
        outbox.enqueue([delivery.id])
    return delivery

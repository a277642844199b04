"""Fan-out: an emitted event becomes one pending delivery per enabled, matching subscription."""

import logging

from shop import queue
from shop.db import named_sql, run_sql
from shop.domain.event_catalog import matches
from shop.domain.webhooks import queue_delivery
from shop.models import Event, WebhookSubscription

log = logging.getLogger("shop.webhooks")


# every emitted event runs this, so it is constant SQL the driver prepares once
ENABLED_SQL = named_sql(
    f"SELECT {WebhookSubscription.columns()} FROM webhook_subscription "
    "WHERE tenant_id = :tenant AND enabled = :yes AND deleted_at IS NULL"
)


def fan_out(event: Event) -> list[str]:
    """Queue the event for every enabled subscription of its tenant that wants it (same transaction)."""
    rows = run_sql(ENABLED_SQL, {"tenant": event.tenant_id, "yes": True})
    subscriptions = [WebhookSubscription.from_row(row) for row in rows]
    ids = [queue_delivery(sub, event).id for sub in subscriptions if matches(sub.events, event.type)]
    enqueue(ids)
    return ids


def enqueue(delivery_ids: list[str]) -> None:
    """Hand deliveries to the consumer, in the caller's transaction when there is one
    (shop.queue_storage); if this fails, the periodic sweep picks them up."""
    if not delivery_ids:
        return
    try:
        for delivery_id in delivery_ids:
            queue.enqueue(queue.DELIVER_WEBHOOK, delivery_id)
    except Exception:
        log.warning("enqueue of %d deliveries failed; the sweep will send them", len(delivery_ids),
                    exc_info=True)

"""Fan-out: an emitted event becomes one pending delivery per enabled, matching subscription."""

import logging

from shop.db import db
from shop.domain.event_catalog import matches
from shop.domain.webhooks import live_subscriptions, queue_delivery
from shop.models import Event, WebhookSubscription

log = logging.getLogger("shop.webhooks")


def fan_out(event: Event) -> list[str]:
    """Queue the event for every enabled subscription of its tenant that wants it (same transaction)."""
    subscriptions = live_subscriptions(event.tenant_id).where(WebhookSubscription.enabled)
    ids = [queue_delivery(sub, event).id for sub in subscriptions if matches(sub.events, event.type)]
    if ids:
        db.after_commit(lambda: enqueue(ids))
    return ids


def enqueue(delivery_ids: list[str]) -> None:
    """Hand deliveries to the consumer; if this fails, the periodic sweep picks them up."""
    try:
        from tasks.webhooks import deliver_webhook

        for delivery_id in delivery_ids:
            deliver_webhook(delivery_id)
    except Exception:
        log.warning("enqueue of %d deliveries failed; the sweep will send them", len(delivery_ids),
                    exc_info=True)

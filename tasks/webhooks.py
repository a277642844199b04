"""Huey jobs that deliver webhooks; the rules live in shop.domain.webhook_delivery."""

from huey import crontab

from shop.domain import webhook_delivery
from shop.queue import huey, settings


@huey.task()
def deliver_webhook(delivery_id: str) -> None:
    """One attempt; the next one is scheduled from the retry table."""
    delay = webhook_delivery.attempt(delivery_id, settings())
    if delay is not None:
        deliver_webhook.schedule((delivery_id,), delay=delay)


@huey.periodic_task(crontab(minute="*"))
def sweep_webhooks() -> None:
    """Re-enqueue every due delivery: a lost enqueue, a killed consumer or a restart loses nothing."""
    for delivery_id in webhook_delivery.due_delivery_ids():
        deliver_webhook(delivery_id)

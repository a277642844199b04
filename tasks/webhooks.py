"""Huey jobs that deliver webhooks; the rules live in shop.domain.webhooks.engine."""

from huey import crontab

from shop.domain.webhooks import engine, recovery
from shop.queue import huey, patient, settings


@huey.task()
@patient
def deliver_webhook(delivery_id: str) -> None:
    """One attempt, and of more due deliveries of its subscription in a batch; each next attempt
    is scheduled from the retry table."""
    for retry_id, delay in engine.attempt_batch(delivery_id, settings()):
        deliver_webhook.schedule((retry_id,), delay=delay)


@huey.periodic_task(crontab(minute="*"))
@patient
def sweep_webhooks() -> None:
    """Re-enqueue every due delivery: a lost enqueue, a killed consumer or a restart loses nothing."""
    for delivery_id in engine.due_delivery_ids():
        deliver_webhook(delivery_id)
    for recovery_id in recovery.running_recovery_ids():
        recover_deliveries(recovery_id)


@huey.task()
@patient
def recover_deliveries(recovery_id: str) -> None:
    """One batch of a recovery; the batch queues the next one in its own transaction."""
    recovery.run_batch(recovery_id)

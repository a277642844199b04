"""Huey jobs that deliver outbound messages; the rules live in shop.domain.messaging.delivery."""

from huey import crontab

from shop.domain.messaging import delivery
from shop.queue import huey, patient, settings


@huey.task()
@patient
def send_message(message_id: int) -> None:
    """Attempt a delivery (with the due messages claimed alongside); schedule what must try again."""
    for again_id, delay in delivery.attempt(message_id, settings()):
        send_message.schedule((again_id,), delay=delay)


@huey.periodic_task(crontab(minute="*"))
@patient
def sweep_messages() -> None:
    """Re-enqueue every message whose attempt is due: a lost enqueue or a dead worker loses nothing."""
    for message_id in delivery.due_message_ids():
        send_message(message_id)

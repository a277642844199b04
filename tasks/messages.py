"""Huey jobs that deliver outbound messages; the rules live in shop.domain.message_delivery."""

from huey import crontab

from shop.domain import message_delivery
from tasks import config, huey


@huey.task()
def send_message(message_id: int) -> None:
    """Attempt one delivery; schedule the next attempt after a transient failure."""
    delay = message_delivery.attempt(message_id, config)
    if delay is not None:
        send_message.schedule((message_id,), delay=delay)


@huey.periodic_task(crontab(minute="*"))
def sweep_messages() -> None:
    """Re-enqueue every message whose attempt is due: a lost enqueue or a dead worker loses nothing."""
    for message_id in message_delivery.due_message_ids():
        send_message(message_id)

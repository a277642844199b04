"""Huey jobs that send appointment reminders; the rules live in shop.domain.appointments.reminders."""

from huey import crontab

from shop.domain.appointments import reminders
from shop.domain.messaging import delivery
from shop.queue import huey, settings
from tasks.messages import send_message


@huey.task()
def send_reminder(reminder_id: str) -> None:
    """Claim one due reminder (and others due with it), re-check its appointment and queue its
    message (or settle why not); then deliver the messages queued, on this thread's connection."""
    _, message_ids = reminders.claim_due(reminder_id)
    for again_id, delay in delivery.attempt_these(message_ids, settings()):
        send_message.schedule((again_id,), delay=delay)


@huey.periodic_task(crontab(minute="*"))
def sweep_reminders() -> None:
    """Enqueue every pending reminder whose time has come (one index range; a reminder enqueued
    twice is sent once: the job's claim takes it only while it is pending)."""
    for reminder_id in reminders.due_reminder_ids():
        send_reminder(reminder_id)

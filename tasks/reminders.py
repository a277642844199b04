"""Huey jobs that send appointment reminders; the rules live in shop.domain.appointments.reminders."""

from huey import crontab

from shop.domain.appointments import reminders
from shop.queue import huey


@huey.task()
def send_reminder(reminder_id: str) -> None:
    """Claim one due reminder, re-check its appointment and queue its message (or settle why not)."""
    reminders.send_due(reminder_id)


@huey.periodic_task(crontab(minute="*"))
def sweep_reminders() -> None:
    """Enqueue every pending reminder whose time has come (one index range; a reminder enqueued
    twice is sent once: the job's claim takes it only while it is pending)."""
    for reminder_id in reminders.due_reminder_ids():
        send_reminder(reminder_id)

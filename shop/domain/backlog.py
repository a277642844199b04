"""The work waiting for a consumer: due webhook deliveries and outbound messages, and the queue."""

from datetime import datetime

from peewee import fn

from shop.domain import heartbeat
from shop.models import Message, WebhookDelivery
from shop.models.webhooks import IN_FLIGHT
from shop.queue import huey


def _due_deliveries(now: datetime):
    """In-flight deliveries whose time has come (index: status, next_attempt_at)."""
    return WebhookDelivery.status.in_(IN_FLIGHT) & (WebhookDelivery.next_attempt_at <= now)


def oldest_due_delivery(now: datetime) -> datetime | None:
    """When the oldest delivery that is due but not yet delivered fell due."""
    oldest = WebhookDelivery.select(fn.MIN(WebhookDelivery.next_attempt_at)).where(_due_deliveries(now))
    return _datetime(oldest.scalar())


def due_deliveries(now: datetime) -> int:
    return WebhookDelivery.select().where(_due_deliveries(now)).count()


def _queued(now: datetime):
    return (Message.delivery_status == "queued") & (Message.next_attempt_at <= now)


def _abandoned(now: datetime):
    """Sends whose claim ran out: the worker that took them stopped."""
    return (Message.delivery_status == "sending") & (Message.claimed_until < now)


def oldest_due_message(now: datetime) -> datetime | None:
    """When the oldest outbound message that is due but unsent fell due (a send whose claim ran
    out fell due when the claim did)."""
    queued = Message.select(fn.MIN(Message.next_attempt_at)).where(_queued(now)).scalar()
    abandoned = Message.select(fn.MIN(Message.claimed_until)).where(_abandoned(now)).scalar()
    found = [value for value in (_datetime(queued), _datetime(abandoned)) if value]
    return min(found) if found else None


def due_messages(now: datetime) -> int:
    return Message.select().where(_queued(now) | _abandoned(now)).count()


def age(when: datetime | None, now: datetime) -> float | None:
    """Seconds from `when` to now (never negative: another box's clock may run ahead)."""
    return None if when is None else round(max(0.0, (now - when).total_seconds()), 1)


def figures(stale_after: float, now: datetime) -> dict:
    """name -> (help, value) of every backlog gauge a scrape reports (an age is 0 with nothing due)."""
    consumers = heartbeat.consumers(stale_after)
    beat_age = age(consumers.last_beat_at, now)
    return {
        "queue_jobs_ready": ("Jobs in the queue waiting for a worker.", huey.storage.queue_size()),
        "queue_jobs_scheduled": ("Jobs scheduled for later (retries).", huey.storage.schedule_size()),
        "webhook_deliveries_due": ("Deliveries due and not delivered.", due_deliveries(now)),
        "webhook_oldest_due_age_seconds": (
            "Age of the oldest due, undelivered delivery (0: none).",
            age(oldest_due_delivery(now), now) or 0,
        ),
        "messages_due": ("Outbound messages due and unsent.", due_messages(now)),
        "message_oldest_due_age_seconds": (
            "Age of the oldest due, unsent outbound message (0: none).",
            age(oldest_due_message(now), now) or 0,
        ),
        "consumers_running": (f"Consumers with a heartbeat under {stale_after:g} s old.", consumers.running),
        "consumers_running_periodic": ("Of those, the ones that run the periodic tasks.", consumers.periodic),
        "consumer_heartbeat_age_seconds": (
            "Age of the newest consumer heartbeat (-1: none ever).",
            -1 if beat_age is None else beat_age,
        ),
    }


def _datetime(value) -> datetime | None:
    """An aggregate of a datetime column (SQLite returns it as text)."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value

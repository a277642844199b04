"""The events outbox: event ids, the envelope, emit() and the fan-out to webhook deliveries.

Everything here runs inside the caller's transaction: the event, its deliveries and their jobs
commit together or not at all. It imports the models and the catalog only, so subscriptions
(ping) and deliveries (redeliver) import it without an import circle.
"""

import logging
import secrets

from shop import clock, queue
from shop.db import deferred, named_sql, on_postgres, read_ahead, run_sql
from shop.domain.events.catalog import matches
from shop.models import Event, WebhookDelivery, WebhookSubscription

log = logging.getLogger("shop.webhooks")


# every emitted event runs this, so it is constant SQL the driver prepares once; :tenant is the
# event's tenant (on PostgreSQL the event's insert, named after its fields, comes in the same statement)
ENABLED_SQL = named_sql(
    f"SELECT {WebhookSubscription.columns()} FROM webhook_subscription "
    "WHERE tenant_id = :tenant AND enabled = :yes AND deleted_at IS NULL"
)


def new_event_id() -> str:
    """evt_ and an unguessable token."""
    return "evt_" + secrets.token_hex(12)


def new_delivery_id() -> str:
    """whd_ and an unguessable token."""
    return "whd_" + secrets.token_hex(12)


def subscriptions_ahead(tenant_id: str):
    """Inside a write transaction that will emit: the tenant's enabled subscriptions, read ahead
    (shop.db.read_ahead: on PostgreSQL answered by the transaction's next round trip), for emit()."""
    rows = read_ahead(ENABLED_SQL, {"tenant": tenant_id, "yes": True})
    return lambda: [WebhookSubscription.from_row(row) for row in rows()]


def emit(tenant_id: str, type_: str, data: dict, subscriptions=None) -> Event:
    """Write the event and its deliveries in the caller's transaction; sending follows the commit.

    `subscriptions`, from subscriptions_ahead() earlier in the transaction, saves the read here: on
    PostgreSQL the event, its deliveries and their jobs then all go out with the COMMIT."""
    values = dict(
        id=new_event_id(), tenant=tenant_id, type=type_, api_version="v1", data=data, created=clock.now()
    )
    if subscriptions is not None:
        subs = subscriptions()
        with deferred():
            event = Event.insert_row(**values)
        fan_out(event, subs)
        return event
    if on_postgres():  # the insert and the read of the subscriptions in one statement: a round trip less
        sql, params = Event.insert_statement(**values)
        rows = run_sql(f"WITH inserted AS ({sql}) {ENABLED_SQL}", {**params, "yes": True})
        event = Event(__no_default__=True, **values)
    else:
        event = Event.insert_row(**values)
        rows = run_sql(ENABLED_SQL, {"tenant": tenant_id, "yes": True})
    fan_out(event, [WebhookSubscription.from_row(row) for row in rows])
    return event


def envelope(event: Event) -> dict:
    """The event as subscribers receive it."""
    return {
        "object": "event",
        "id": event.id,
        "type": event.type,
        "created": clock.isoformat(event.created),
        "api_version": event.api_version,
        "data": event.data,
    }


def fan_out(event: Event, subscriptions: list[WebhookSubscription]) -> list[str]:
    """Queue the event for each of its tenant's enabled subscriptions that wants it (same transaction)."""
    with deferred():  # PostgreSQL: written with the transaction's next round trip (its COMMIT)
        ids = [queue_delivery(sub, event).id for sub in subscriptions if matches(sub.events, event.type)]
        enqueue(ids)
    return ids


def queue_delivery(sub: WebhookSubscription, event: Event) -> WebhookDelivery:
    """A pending delivery of an event to a subscription, due now (the engine sends it)."""
    now = clock.now()
    return WebhookDelivery.insert_row(
        id=new_delivery_id(),
        tenant=sub.tenant_id,
        subscription=sub.id,
        event=event.id,
        event_type=event.type,
        payload=envelope(event),
        status="pending",
        attempts=0,
        next_attempt_at=now,
        created_at=now,
        updated_at=now,
        run_trigger="initial",
    )


def enqueue(delivery_ids: list[str]) -> None:
    """Hand deliveries to the consumer, in the caller's transaction when there is one
    (shop.queue_storage); if this fails, the periodic sweep picks them up."""
    if not delivery_ids:
        return
    try:
        for delivery_id in delivery_ids:
            queue.enqueue(queue.DELIVER_WEBHOOK, delivery_id)
    except Exception:
        log.warning(
            "enqueue of %d deliveries failed; the sweep will send them", len(delivery_ids), exc_info=True
        )

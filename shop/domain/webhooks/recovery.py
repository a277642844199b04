"""Recover: re-queue a subscription's finished deliveries of a time window, in bounded batches."""

import secrets
from datetime import datetime

from peewee import IntegrityError

from shop import clock, queue
from shop.db import locked, write_transaction
from shop.domain.events import outbox
from shop.domain.webhooks.subscriptions import SUBSCRIPTION_LOCK, get_subscription_or_404
from shop.models import WebhookDelivery, WebhookRecovery, WebhookSubscription
from shop.platform.errors import ApiError

DEFAULT_STATUSES = ("dead", "failed")
BATCH_SIZE = 200  # deliveries re-queued per job run: one short write transaction each


def new_recovery_id() -> str:
    """whrec_ and an unguessable token."""
    return "whrec_" + secrets.token_hex(12)


def _matching(sub_id: str, since: datetime, until: datetime, statuses: list[str]):
    """The subscription's deliveries created in [since, until) with one of the statuses."""
    return WebhookDelivery.select().where(
        (WebhookDelivery.subscription == sub_id)
        & (WebhookDelivery.created_at >= since)
        & (WebhookDelivery.created_at < until)
        & WebhookDelivery.status.in_(statuses)
    )


def recover(tenant_id: str, subscription_id: str, body: dict) -> WebhookRecovery:
    """Count the deliveries a recovery would re-queue and, unless a dry run, start it as a job."""
    now = clock.now()
    since, until = body["since"], body.get("until") or now
    if until <= since:
        raise ApiError(400, "invalid_field", "until: must be later than since.", param="until")
    statuses = list(dict.fromkeys(body.get("statuses") or DEFAULT_STATUSES))
    with write_transaction():
        sub = _locked_subscription(tenant_id, subscription_id)
        count = _matching(sub.id, since, until, statuses).count()
        recovery = WebhookRecovery(
            id=new_recovery_id(),
            tenant=tenant_id,
            subscription=sub.id,
            since=since,
            until=until,
            statuses=statuses,
            dry_run=body["dry_run"],
            count=count,
            status="completed" if body["dry_run"] else "running",
            running=None if body["dry_run"] else 1,
            created_at=now,
            finished_at=now if body["dry_run"] else None,
        )
        try:
            with write_transaction():  # a savepoint: the unique index refuses a second running one
                recovery.save(force_insert=True)
        except IntegrityError:
            raise ApiError(
                409,
                "recovery_in_progress",
                "A recovery of this subscription is still running; wait for it to finish.",
            ) from None
        if not body["dry_run"]:
            queue.enqueue(queue.RECOVER_DELIVERIES, recovery.id)
    return recovery


def get_recovery(tenant_id: str, subscription_id: str, recovery_id: str) -> WebhookRecovery | None:
    """A recovery of this tenant's subscription, or None (another tenant's is as good as missing)."""
    if not recovery_id.startswith("whrec_") or len(recovery_id) > 40 or "\x00" in recovery_id:
        return None
    query = WebhookRecovery.for_tenant(tenant_id).where(
        (WebhookRecovery.id == recovery_id) & (WebhookRecovery.subscription == subscription_id)
    )
    return query.first()


def _locked_subscription(tenant_id: str, subscription_id: str) -> WebhookSubscription:
    """The live subscription, locked for this transaction on PostgreSQL (SQLite: the write lock
    is already held), enabled or 422."""
    sub = get_subscription_or_404(tenant_id, subscription_id, lock=True)
    if not sub.enabled:
        raise ApiError(422, "subscription_disabled", "This subscription is disabled; enable it first.")
    return sub


def run_batch(recovery_id: str, batch_size: int = BATCH_SIZE) -> bool:
    """Re-queue the next batch of a running recovery; True while more remain (queue another run)."""
    with write_transaction():
        # FOR UPDATE: a sweep's run and the queued one never work one recovery at once (PostgreSQL)
        recovery = locked(WebhookRecovery.select().where(WebhookRecovery.id == recovery_id)).first()
        if recovery is None or recovery.status != "running":
            return False
        # the subscription's row before its deliveries' (docs/decisions.md, "Lock order"): a disable
        # or delete in progress is waited for and then seen, so nothing is re-queued after it
        sub = locked(
            WebhookSubscription.select().where(WebhookSubscription.id == recovery.subscription_id),
            SUBSCRIPTION_LOCK,
        ).get()
        query = _matching(sub.id, recovery.since, recovery.until, recovery.statuses)
        if recovery.after_id is not None:  # keyset: a re-queued delivery that finishes again is not re-read
            query = query.where(
                (WebhookDelivery.created_at > recovery.after_created_at)
                | (
                    (WebhookDelivery.created_at == recovery.after_created_at)
                    & (WebhookDelivery.id > recovery.after_id)
                )
            )
        batch = list(query.order_by(WebhookDelivery.created_at, WebhookDelivery.id).limit(batch_size))
        live = sub.enabled and sub.deleted_at is None
        if batch and live:
            recovery.requeued += _requeue(batch)
            last = batch[-1]
            recovery.after_created_at, recovery.after_id = last.created_at, last.id
        more = live and len(batch) == batch_size
        if not more:
            recovery.status, recovery.running, recovery.finished_at = "completed", None, clock.now()
        recovery.save()
        if more:
            queue.enqueue(queue.RECOVER_DELIVERIES, recovery.id)
    return more


def _requeue(batch: list[WebhookDelivery]) -> int:
    """Each delivery pending again, due now, its attempt counter reset and its run a recovery; how
    many (one pruned since the batch was read is gone).

    On PostgreSQL their rows are locked in id order first, as every transaction takes several
    deliveries' rows: the UPDATE alone takes them in whatever order its plan meets them."""
    now = clock.now()
    in_id_order = (
        WebhookDelivery.select(WebhookDelivery.id)
        .where(WebhookDelivery.id.in_([delivery.id for delivery in batch]))
        .order_by(WebhookDelivery.id)
    )
    ids = [row[0] for row in locked(in_id_order, "NO KEY UPDATE").tuples()]
    if not ids:
        return 0
    (
        WebhookDelivery.update(
            status="pending",
            attempts=0,
            next_attempt_at=now,
            claimed_until=None,
            updated_at=now,
            run_trigger="recover",
        )
        .where(WebhookDelivery.id.in_(ids))
        .execute()
    )
    outbox.enqueue(ids)
    return len(ids)


def running_recovery_ids() -> list[str]:
    """Recoveries still running (the sweep runs their next batch: a lost job loses nothing)."""
    return [
        row.id
        for row in WebhookRecovery.select(WebhookRecovery.id).where(WebhookRecovery.status == "running")
    ]

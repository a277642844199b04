"""The delivery engine's rules: claim a due delivery, log the attempt, send it, record the outcome."""

import json
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

from shop import clock, queue
from shop.db import deferred, locked, named_sql, on_postgres, run_sql, run_together, write_transaction
from shop.domain.webhooks import destinations, etiquette, notices
from shop.domain.webhooks import transport as webhook_transport
from shop.domain.webhooks.signing import signature_header
from shop.domain.webhooks.subscriptions import (
    SUBSCRIPTION_LOCK,
    dead_letter,
    lock_subscription,
    signing_secrets,
)
from shop.models import WebhookDelivery, WebhookDeliveryAttempt, WebhookSubscription
from shop.models.webhooks import IN_FLIGHT
from shop.platform import keyring, metrics

log = logging.getLogger("shop.webhooks")
MAX_ATTEMPTS = 8
AUTO_DISABLE_WINDOW = timedelta(days=7)
AUTO_DISABLE_NOTICE = (
    "Disabled automatically: every delivery of the last 7 days failed permanently. "
    "Fix the endpoint, then PATCH enabled true."
)
GONE_NOTICE = "Disabled: the endpoint answered 410 Gone. Fix the endpoint, then PATCH enabled true."
INTERRUPTED = "interrupted: the worker stopped before the attempt finished"
DISABLED = "subscription disabled or deleted"


def retry_delays(config) -> list[float]:
    """Seconds before attempts 1..8 (SHOP_WEBHOOK_RETRY_DELAYS)."""
    delays = [float(x) for x in str(config["WEBHOOK_RETRY_DELAYS"]).split(",") if x.strip()]
    return (delays + [delays[-1]] * MAX_ATTEMPTS)[:MAX_ATTEMPTS]


HOLD_MARGIN = 5  # seconds a claim outlasts the attempt's deadline
# a job attempts up to this many due deliveries of one subscription in a row, claimed together
BATCH_SIZE = 10


def hold_seconds(config) -> float:
    """How long a worker holds a delivery it attempts: the attempt's deadline and a margin."""
    return float(config["WEBHOOK_TIMEOUT"]) + HOLD_MARGIN


def new_attempt_id() -> str:
    """whatt_ and an unguessable token."""
    return "whatt_" + secrets.token_hex(12)


# the statements run for every attempt, as constant SQL the driver prepares once (building them
# with the query builder cost more than the HTTP request: docs/performance.md). The claim counts
# the attempt: one cut off by a killed worker still counts in `attempts`.
# due and held by no worker (the names are the delivery's alone, so they read the same in the join)
DUE = (
    "status IN ('pending', 'retrying') AND next_attempt_at <= :now "
    "AND (claimed_until IS NULL OR claimed_until < :now)"
)
# read (no write lock) the delivery and its subscription, so the body is signed before the claim
DUE_SQL = named_sql(
    f"SELECT {WebhookDelivery.columns('d')}, {WebhookSubscription.columns('s')} FROM webhook_delivery d "
    f"JOIN webhook_subscription s ON s.id = d.subscription_id WHERE d.id = :id AND {DUE}"
)
# a batch takes the deliveries of the next queued delivery jobs: this many are looked at
QUEUE_LOOKAHEAD = 32
CLAIM_SQL = named_sql(
    "UPDATE webhook_delivery SET claimed_until = :until, attempts = attempts + 1, "
    f"last_attempt_at = :now, updated_at = :now WHERE id = :id AND {DUE} RETURNING attempts, run_trigger"
)
# an attempt still "started" when its delivery is claimed again was cut off by a killed worker
INTERRUPTED_SQL = named_sql(
    "UPDATE webhook_delivery_attempt SET status = 'interrupted', error = :error, finished_at = :now "
    "WHERE delivery_id = :id AND status = 'started'"
)
RECORD_SQL = named_sql(
    "UPDATE webhook_delivery SET status = :status, last_error = :error, claimed_until = NULL, "
    "updated_at = :now, last_status_code = :code, response_ms = :ms, response_excerpt = :excerpt, "
    "next_attempt_at = :next, delivered_at = COALESCE(:delivered, delivered_at) WHERE id = :id"
)
# a batch member whose request never went out goes back as it was: not held, the attempt uncounted
RELEASE_SQL = named_sql(
    "UPDATE webhook_delivery SET claimed_until = NULL, attempts = attempts - 1, last_attempt_at = :previous "
    "WHERE id = :id AND claimed_until = :until AND status IN ('pending', 'retrying')"
)
UNSTARTED_SQL = named_sql("DELETE FROM webhook_delivery_attempt WHERE id = :id AND status = 'started'")
FINISH_ATTEMPT_SQL = named_sql(
    "UPDATE webhook_delivery_attempt SET status = :status, finished_at = :now, duration_ms = :ms, "
    "address = :address, response_status = :code, response_headers = :headers, "
    "response_body = :body, error = :error WHERE id = :id"
)
# a disable notice stays while the subscription is off: neither an attempt that ends after the
# disable (one sent before it, recorded after) nor a success replaces it
NOTE_FAILURE_SQL = named_sql(
    "UPDATE webhook_subscription SET last_error = :reason WHERE id = :id AND enabled"
)
CLEAR_FAILURE_SQL = named_sql(
    "UPDATE webhook_subscription SET last_error = NULL WHERE id = :id AND enabled AND deleted_at IS NULL"
)


@dataclass
class Outcome:
    """What one attempt came to, as the attempt log and the delivery record it."""

    error: str | None = None
    reply: webhook_transport.Reply | None = None
    address: str | None = None
    ms: int | None = None

    @property
    def succeeded(self) -> bool:
        return self.reply is not None and 200 <= self.reply.status < 300

    @property
    def reason(self) -> str:
        return self.error or f"HTTP {self.reply.status}"


@dataclass
class Started:
    delivery: WebhookDelivery
    sub: WebhookSubscription
    attempt_id: str
    body: bytes
    headers: dict
    previous_attempt_at: object = None  # the delivery's last_attempt_at before this claim
    held_until: object = None  # the claim's claimed_until


def attempt(delivery_id: str, config) -> float | None:
    """One attempt of a delivery; returns the delay before the next one, or None when it ended."""
    started = start_attempt(delivery_id, config)
    if started is None:
        return None
    if not started.sub.enabled or started.sub.deleted_at is not None:
        _finish(started, "dead", Outcome(error=DISABLED))
        return None
    return conclude(started, send(started, config), config)


def attempt_batch(delivery_id: str, config, size: int = BATCH_SIZE) -> list[tuple[str, float]]:
    """Attempt a due delivery and up to size - 1 more due deliveries of its subscription, one after
    another; returns the retries to schedule as (delivery id, delay).

    The others are the deliveries of the next delivery jobs in the queue that are due and of the
    same subscription: one read and one claim transaction (each attempt written as started, their
    jobs taken from the queue) serve the whole batch. Each outcome is still recorded before the next
    request goes out, so a killed worker leaves at most one request sent and unrecorded. The batch
    stops at the first attempt that does not succeed, or once the claims' margin is spent (a member
    sent later could outlive its hold): the members not sent go back as they were, requeued.
    """
    now, began = clock.now(), time.monotonic()  # the claims' hold runs from `now`
    due, queued = _read_due_and_queued(delivery_id, now, size > 1)
    if due is None:
        return []
    delivery, sub = due
    members, jobs = [delivery], {}
    if size > 1 and sub.enabled and sub.deleted_at is None:
        members += _queued_members(delivery, sub, now, size - 1, jobs, queued)
    batch = _start(members, sub, config, now, jobs)
    retries = []
    for index, started in enumerate(batch):
        if index and time.monotonic() - began >= HOLD_MARGIN:
            release(batch[index:])
            break
        if not sub.enabled or sub.deleted_at is not None:
            _finish(started, "dead", Outcome(error=DISABLED))
            continue
        outcome = send(started, config)
        if not outcome.succeeded:
            release(batch[index + 1 :])  # before the outcome, which may dead-letter the subscription
        delay = conclude(started, outcome, config)
        if delay is not None:
            retries.append((started.delivery.id, delay))
        if not outcome.succeeded:
            break
    return retries


def _read_due_and_queued(delivery_id: str, now, lookahead: bool) -> tuple[tuple | None, list | None]:
    """_read_due() and, when a batch may follow, the jobs next in the queue (None: not read yet).

    On PostgreSQL both reads go out in one round trip; on SQLite, where a read costs no round
    trip, the queue is read only once the delivery turned out due (in _queued_members).
    """
    if not lookahead or not on_postgres():
        return _read_due(delivery_id, now), None
    due_rows, queued_rows = run_together(
        (DUE_SQL, {"id": delivery_id, "now": now}), queue.queued_statement(QUEUE_LOOKAHEAD)
    )
    return _due_from(due_rows), queue.queued_in(queued_rows, queue.DELIVER_WEBHOOK)


def _queued_members(
    delivery: WebhookDelivery, sub: WebhookSubscription, now, limit: int, jobs: dict, queued
) -> list:
    """Up to `limit` due deliveries of the same subscription whose jobs wait next in the queue
    (`queued`, when already read); fills `jobs` with the queued job ids of each (the batch's claim
    takes them from the queue)."""
    if queued is None:
        queued = queue.queued(queue.DELIVER_WEBHOOK, QUEUE_LOOKAHEAD)
    for job_id, args in queued:
        if len(args) == 1 and isinstance(args[0], str) and args[0] != delivery.id:
            jobs.setdefault(args[0], []).append(job_id)
    if not jobs:
        return []
    return [
        WebhookDelivery.from_row(row) for row in run_sql(*members_statement(list(jobs), sub.id, now, limit))
    ]


def members_statement(delivery_ids: list, subscription_id: str, now, limit: int) -> tuple[str, dict]:
    """The read of a batch's members as (statement, parameters): of these deliveries, up to `limit`
    due ones of the subscription, the earliest due first.

    The deliveries are looked up by their ids first (a materialized CTE): left to itself, SQLite's
    planner served the due condition from the (status, next_attempt_at) index and read every due
    delivery of every subscription (4 ms a batch with 3,000 due; docs/performance.md, session 9),
    or the subscription's index and read all its deliveries ever.
    """
    # parameter names of letters only (shop.db's :name style): da, db, ..., dbc for the one at 12
    ids = {
        "d" + "".join(chr(97 + int(c)) for c in str(i)): delivery_id
        for i, delivery_id in enumerate(delivery_ids)
    }
    statement = named_sql(
        f"WITH m AS MATERIALIZED (SELECT {WebhookDelivery.columns()} FROM webhook_delivery WHERE id IN "
        f"({', '.join(':' + name for name in ids)})) "
        f"SELECT {WebhookDelivery.columns()} FROM m WHERE subscription_id = :sub AND {DUE} "
        "ORDER BY next_attempt_at, id LIMIT :n"
    )
    return statement, {**ids, "sub": subscription_id, "now": now, "n": limit}


def release(unsent: list[Started]) -> None:
    """Give claimed batch members whose requests never went out back, uncounted, and requeue them."""
    if not unsent:
        return
    with write_transaction(), deferred():  # nothing read: on PostgreSQL sent with the COMMIT
        for started in sorted(unsent, key=lambda started: started.delivery.id):  # as claimed: id order
            params = {"id": started.delivery.id, "previous": started.previous_attempt_at}
            run_sql(RELEASE_SQL, {**params, "until": started.held_until})
            run_sql(UNSTARTED_SQL, {"id": started.attempt_id})
            queue.enqueue(queue.DELIVER_WEBHOOK, started.delivery.id)


def conclude(started: Started, outcome: Outcome, config) -> float | None:
    """Record a sent attempt's outcome; the delay before the next attempt, or None when it ended."""
    delivery = started.delivery
    if outcome.succeeded:
        _finish(started, "delivered", outcome)
        return None
    if outcome.reply is not None and outcome.reply.status == 410:
        _gone(started, outcome)
        return None
    if outcome.error is not None and outcome.error.startswith("blocked target"):
        _finish(started, "dead", outcome)
        return None
    if delivery.attempts >= MAX_ATTEMPTS:
        _finish(started, "dead", outcome)
        return None
    delay = etiquette.next_delay(retry_delays(config)[delivery.attempts], outcome.reply)
    _finish(started, "retrying", outcome, next_at=clock.now() + timedelta(seconds=delay))
    return delay


def claim(delivery_id: str, hold_seconds: float) -> tuple[int, str] | None:
    """Take a due delivery for one attempt, counted: (attempts, run_trigger), or None if it is not
    due or another worker has it (an UPDATE under the row's lock; a transaction of its own)."""
    with write_transaction():
        return _claim(delivery_id, hold_seconds, clock.now())


def _claim(delivery_id: str, hold_seconds: float, now) -> tuple[int, str] | None:
    rows = run_sql(*_claim_statement(delivery_id, hold_seconds, now))
    return tuple(rows[0]) if rows else None


def _claim_statement(delivery_id: str, hold_seconds: float, now) -> tuple[str, dict]:
    """The claim of one delivery as (statement, parameters); it returns (attempts, run_trigger)."""
    return CLAIM_SQL, {"id": delivery_id, "now": now, "until": now + timedelta(seconds=hold_seconds)}


def start_attempt(delivery_id: str, config) -> Started | None:
    """Claim a due delivery and write its attempt as started, in one short transaction of its own,
    before any request goes out (None if it is not due or another worker has it)."""
    now = clock.now()
    due = _read_due(delivery_id, now)
    if due is None:
        return None
    started = _start([due[0]], due[1], config, now)
    return started[0] if started else None


def _read_due(delivery_id: str, now) -> tuple[WebhookDelivery, WebhookSubscription] | None:
    """The delivery and its subscription if it is due and no worker holds it (a read: no write lock)."""
    return _due_from(run_sql(DUE_SQL, {"id": delivery_id, "now": now}))


def _due_from(rows: list) -> tuple[WebhookDelivery, WebhookSubscription] | None:
    """The delivery and its subscription from DUE_SQL's rows (None: not due or held)."""
    if not rows:
        return None
    split = len(WebhookDelivery._meta.sorted_fields)
    return WebhookDelivery.from_row(rows[0][:split]), WebhookSubscription.from_row(rows[0][split:])


def _start(deliveries: list, sub: WebhookSubscription, config, now, jobs=None) -> list[Started]:
    """Claim the deliveries and write each attempt as started, in one short transaction; the
    queued jobs of the claimed ones (`jobs`: delivery id to job ids) leave the queue in it.

    They are signed first, outside the write lock: the lock is held for the claims and the inserts
    only (a thread holding it must not wait for the GIL behind Python work). A delivery another
    worker claimed since it was read is left out, and its job stays.
    """
    signed = sorted(((delivery, *_signed(delivery, sub, config)) for delivery in deliveries), key=_by_id)
    hold = hold_seconds(config)
    until = now + timedelta(seconds=hold)
    batch = []
    with write_transaction():
        # every claim before any attempt row: claimed in id order, two batches that share deliveries
        # on PostgreSQL take their row locks in the same order; and the attempt rows' foreign key
        # takes a share lock on the subscription row, which a transaction must not hold while it
        # waits for a delivery row (a ping queued for that row's FOR UPDATE closed such a cycle).
        # On PostgreSQL the claims go out in one round trip (each still runs after the one before)
        claimed = run_together(*(_claim_statement(delivery.id, hold, now) for delivery, _, _ in signed))
        claims = []
        for (delivery, body, headers), rows in zip(signed, claimed, strict=True):
            if rows:  # else another worker claimed it since the read
                previous = delivery.last_attempt_at
                delivery.attempts, delivery.run_trigger = rows[0]
                claims.append((delivery, body, headers, previous))
        # nobody reads what these writes return: on PostgreSQL they travel with the COMMIT
        with deferred():
            for delivery, body, headers, previous in claims:
                attempt_id = _write_started(delivery, sub, headers, now)
                batch.append(Started(delivery, sub, attempt_id, body, headers, previous, until))
            if jobs:
                queue.take([job for started in batch for job in jobs.get(started.delivery.id, ())])
    order = {delivery.id: place for place, delivery in enumerate(deliveries)}
    return sorted(batch, key=lambda started: order[started.delivery.id])


def _by_id(signed: tuple) -> str:
    return signed[0].id


def _write_started(delivery: WebhookDelivery, sub: WebhookSubscription, headers: dict, now) -> str:
    """Write a claimed delivery's attempt as started (an earlier one still started was cut off); its id."""
    if delivery.attempts > 1:  # an earlier attempt of this run may have been cut off
        run_sql(INTERRUPTED_SQL, {"id": delivery.id, "error": INTERRUPTED, "now": now})
    attempt_id = new_attempt_id()
    WebhookDeliveryAttempt.insert_row(
        id=attempt_id,
        tenant=delivery.tenant_id,
        delivery=delivery.id,
        subscription=sub.id,
        number=delivery.attempts,
        trigger=delivery.run_trigger if delivery.attempts == 1 else "retry",
        status="started",
        started_at=now,
        request_headers=headers,
    )
    return attempt_id


def _signed(delivery: WebhookDelivery, sub: WebhookSubscription, config) -> tuple[bytes, dict]:
    """The body as sent and the headers that go with it (a disabled subscription has no secret)."""
    body = json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False).encode()
    headers = {
        "Content-Type": "application/json",
        "Service-Event-Id": delivery.event_id,
        "Service-Event-Type": delivery.event_type,
    }
    keys = signing_secrets(sub, keyring.ring(config).keys) if sub.enabled and sub.deleted_at is None else []
    if keys:
        headers["Service-Signature"] = signature_header(keys, int(clock.timestamp()), body)
    return body, headers


def send(started: Started, config) -> Outcome:
    """The HTTP POST to the vetted address, outside any transaction, as an Outcome."""
    timeout = float(config["WEBHOOK_TIMEOUT"])
    networks = destinations.parse_networks(config.get("WEBHOOK_TRUSTED_NETWORKS"))
    began = time.perf_counter()
    try:
        reply = webhook_transport.post(
            started.sub.url, started.body, started.headers, timeout, config.get("WEBHOOK_CA_BUNDLE"), networks
        )
    except webhook_transport.Blocked as blocked:
        return Outcome(error=str(blocked), ms=_ms(began))
    except webhook_transport.NetworkError as error:
        return Outcome(error=str(error), address=error.address, ms=_ms(began))
    return Outcome(reply=reply, address=reply.address, ms=_ms(began))


def _ms(began: float) -> int:
    return int((time.perf_counter() - began) * 1000)


def _finish(started: Started, status: str, outcome: Outcome, next_at=None) -> None:
    """Write the attempt's outcome and the delivery's new state, then count it (metrics)."""
    _write_finish(started, status, outcome, next_at)
    metrics.attempt_finished(status, outcome)


def _write_finish(started: Started, status: str, outcome: Outcome, next_at) -> None:
    """Write the attempt's outcome and the delivery's new state in one transaction; a dead
    delivery may notify the inbox and auto-disable its subscription."""
    sub = started.sub
    log_attempt(started, status, outcome)  # before the write lock: a log line is I/O
    with write_transaction():
        # results nobody reads: on PostgreSQL they travel with the COMMIT (a read below flushes them first)
        with deferred():
            if status != "delivered" or sub.last_error is not None:  # it writes the subscription's row too
                lock_subscription(sub.id)  # before the delivery's (docs/decisions.md, "Lock order")
            _record(started, status, outcome, next_at)
            if status == "delivered":
                if sub.last_error is not None:
                    run_sql(CLEAR_FAILURE_SQL, {"id": sub.id})
            else:
                run_sql(NOTE_FAILURE_SQL, {"id": sub.id, "reason": outcome.reason[:500]})
        if status == "dead" and outcome.error != DISABLED:
            notices.delivery_dead(started.delivery, outcome.reason)
            maybe_auto_disable(sub)


def _record(started: Started, status: str, outcome: Outcome, next_at) -> None:
    """The attempt's row finished and the delivery's row updated (inside the caller's transaction)."""
    now, reply = clock.now(), outcome.reply
    run_sql(
        RECORD_SQL,
        {
            "id": started.delivery.id,
            "status": status,
            "error": outcome.error,
            "now": now,
            "code": reply.status if reply else None,
            "ms": reply.ms if reply else None,
            "excerpt": reply.excerpt if reply else None,
            "next": next_at,
            "delivered": now if status == "delivered" else None,
        },
    )
    headers = json.dumps(reply.headers, separators=(",", ":")) if reply else None
    run_sql(
        FINISH_ATTEMPT_SQL,
        {
            "id": started.attempt_id,
            "now": now,
            "ms": outcome.ms,
            "status": "succeeded" if outcome.succeeded else "failed",
            "address": outcome.address,
            "code": reply.status if reply else None,
            "headers": headers,
            "body": reply.body if reply else None,
            "error": outcome.error,
        },
    )
    started.delivery.status = status


def log_attempt(started: Started, status: str, outcome: Outcome) -> None:
    """One line per attempt (logger shop.webhooks): ids, outcome, status code, duration, error;
    never the payload, the headers or the signature."""
    reply = outcome.reply
    fields = {
        "event": "webhook_attempt",
        "delivery_id": started.delivery.id,
        "attempt_id": started.attempt_id,
        "attempt": started.delivery.attempts,
        "tenant": started.delivery.tenant_id,
        "subscription_id": started.sub.id,
        "event_id": started.delivery.event_id,
        "event_type": started.delivery.event_type,
        "outcome": status,
        "status_code": reply.status if reply else None,
        "duration_ms": outcome.ms,
        "error": outcome.error,
    }
    log.log(
        logging.INFO if outcome.succeeded else logging.WARNING,
        "webhook attempt %s #%s of %s to %s: %s (%s, %sms)%s",
        fields["attempt_id"],
        fields["attempt"],
        fields["delivery_id"],
        fields["subscription_id"],
        status,
        fields["status_code"] or "no response",
        fields["duration_ms"],
        f": {outcome.error}" if outcome.error else "",
        extra={"fields": fields},
    )


def _gone(started: Started, outcome: Outcome) -> None:
    """A 410 Gone: the delivery is dead and the subscription disabled at once."""
    log_attempt(started, "dead", outcome)
    with write_transaction():
        with deferred():  # answered with disable()'s update, the first statement that reads
            lock_subscription(started.sub.id)  # before the delivery's row (docs/decisions.md, "Lock order")
            _record(started, "dead", outcome, None)
        disable(started.sub, GONE_NOTICE, "gone", started.delivery.id)
    metrics.attempt_finished("dead", outcome)
    log.warning("webhook subscription %s disabled: the endpoint answered 410 Gone", started.sub.id)


def disable(sub: WebhookSubscription, notice: str, reason: str, delivery_id: str | None = None) -> bool:
    """Turn a subscription off with its notice, dead-letter its queue and tell the inbox (once)."""
    now = clock.now()
    changes = {"enabled": False, "disabled_at": now, "updated_at": now, "last_error": notice}
    changed = (
        WebhookSubscription.update(**changes)
        .where((WebhookSubscription.id == sub.id) & (WebhookSubscription.enabled == True))  # noqa: E712
        .execute()
    )
    if not changed:  # already off: a concurrent attempt disabled it first
        return False
    dead_letter(sub)
    notices.subscription_disabled(sub, reason, notice, delivery_id)
    return True


def maybe_auto_disable(sub: WebhookSubscription) -> bool:
    """Disable a subscription whose deliveries have all failed permanently for 7 days."""
    now = clock.now()
    window_start = now - AUTO_DISABLE_WINDOW
    deliveries = WebhookDelivery.select().where(WebhookDelivery.subscription == sub.id)
    if deliveries.where(WebhookDelivery.delivered_at >= window_start).exists():
        return False
    # the failures must span the window: a dead delivery at least 7 days old, none delivered since
    failing_since = deliveries.where(
        WebhookDelivery.status.in_(("dead", "failed")) & (WebhookDelivery.created_at <= window_start)
    ).exists()
    # re-read under a row lock: the owner may have re-enabled it, or another worker disabled it
    current = locked(
        WebhookSubscription.select(WebhookSubscription.enabled).where(WebhookSubscription.id == sub.id),
        SUBSCRIPTION_LOCK,
    ).first()
    if not failing_since or current is None or not current.enabled:
        return False
    if disable(sub, AUTO_DISABLE_NOTICE, "auto_disabled"):
        log.warning("webhook subscription %s disabled after 7 days of failed deliveries", sub.id)
        return True
    return False


def due_delivery_ids(limit: int = 1000) -> list[str]:
    """Pending or retrying deliveries whose time has come and that no worker holds (for the sweep)."""
    now = clock.now()
    rows = (
        WebhookDelivery.select(WebhookDelivery.id)
        .where(
            WebhookDelivery.status.in_(IN_FLIGHT)
            & (WebhookDelivery.next_attempt_at <= now)
            & (WebhookDelivery.claimed_until.is_null() | (WebhookDelivery.claimed_until < now))
        )
        .order_by(WebhookDelivery.next_attempt_at)
        .limit(limit)
    )
    return [row.id for row in rows]

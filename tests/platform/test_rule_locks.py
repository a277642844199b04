"""Each rule SQLite's single writer made safe, hammered from several connections at once (threads,
each with its own connection) or raced against another connection holding the rule's lock: the
invariant holds on both backends. On PostgreSQL each test fails when that rule's lock is removed
(docs/decisions.md, "The mechanism of each rule"; which were checked so is said there)."""

import sqlite3
import threading
import time
from collections import Counter
from datetime import timedelta

import pytest

from shop import clock
from shop.db import db, on_postgres, write_transaction
from shop.domain import retention
from shop.domain.messaging.delivery import claim as claim_messages
from shop.domain.notifications import archive_read
from shop.domain.webhooks import engine, recovery
from shop.domain.webhooks import transport as webhook_transport
from shop.models import (
    AuthFailure,
    Customer,
    IdempotencyRecord,
    Message,
    Notification,
    WebhookDelivery,
    WebhookRecovery,
    WebhookSubscription,
)
from shop.platform.auth_failures import BlockedAddresses
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.messages import send, shop_fixture

THREADS = 8


def at_once(fn, count: int = THREADS) -> list:
    """Call fn(i) from `count` threads released together; the results in thread order."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def run(i):
        barrier.wait(timeout=20)
        try:
            results[i] = fn(i)
        except Exception as error:  # noqa: BLE001  (the assertions name it)
            results[i] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


class OtherWriter:
    """Another process's connection inside a write transaction: SQLite's write lock, or on
    PostgreSQL the row locks of what it writes. Commits when told to."""

    def __init__(self, database: str):
        if on_postgres():
            import psycopg

            self.conn = psycopg.connect(database, autocommit=True)
            self.conn.execute("BEGIN")
        else:
            self.conn = sqlite3.connect(database, isolation_level=None, timeout=10)
            self.conn.execute("BEGIN IMMEDIATE")

    def execute(self, sql: str) -> None:
        self.conn.execute(sql)

    def commit_later(self, seconds: float = 0.5) -> None:
        time.sleep(seconds)
        self.conn.execute("COMMIT")
        self.conn.close()


def in_thread(fn) -> tuple[threading.Thread, dict]:
    """Start fn in a thread of its own (its own connection); its result or error lands in the dict."""
    outcome: dict = {}

    def run():
        try:
            outcome["result"] = fn()
        except Exception as error:  # noqa: BLE001
            outcome["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


# ---- idempotency claims: one execution per key, also when an abandoned claim is taken over ----


def test_concurrent_retries_take_over_an_abandoned_claim_once(app, acme):
    from tests.platform.test_idempotency import _fingerprint_of, post

    client = app.test_client()
    IdempotencyRecord.create(
        api_key_id="key_acme",
        key="k-abandoned",
        fingerprint=_fingerprint_of(client, acme),
        locked_until=clock.now() - timedelta(seconds=1),
        created_at=clock.now(),
    )
    results = at_once(lambda i: post(app.test_client(), acme, {"display_name": "Ann"}, key="k-abandoned"))
    statuses = Counter(
        f"{r.status_code} replay" if r.headers.get("Idempotent-Replayed") else str(r.status_code)
        for r in results
    )
    assert statuses["201"] == 1, statuses
    assert set(statuses) <= {"201", "201 replay", "409"}, statuses
    assert Customer.select().count() == 1


def test_connections_that_all_saw_a_claim_abandoned_take_it_over_once(app, acme):
    # on PostgreSQL a retry's INSERT waits for a takeover in progress (the unique index), so the
    # race is narrow: here every connection has read the abandoned claim before any takes it over
    from shop.platform.idempotency import _take_over

    IdempotencyRecord.create(
        api_key_id="key_acme",
        key="k-abandoned",
        fingerprint="f" * 64,
        locked_until=clock.now() - timedelta(seconds=1),
        created_at=clock.now(),
    )
    seen = [IdempotencyRecord.get(IdempotencyRecord.key == "k-abandoned") for _ in range(THREADS)]
    until = clock.now() + timedelta(seconds=60)
    assert Counter(at_once(lambda i: _take_over(seen[i], until))) == {True: 1, False: THREADS - 1}


# ---- the per-address auth-failure limit: every failure counted, from every connection ----


def test_failures_recorded_at_once_are_all_counted(app):
    per_thread = 25

    def fail(_):
        counter = BlockedAddresses()  # a process of its own, sharing only the database
        for _ in range(per_thread):
            counter.record("198.51.100.7", 10_000)

    if 60 - clock.timestamp() % 60 < 10:  # keep the hammering inside one clock minute
        clock.advance(11)
    assert not [r for r in at_once(fail) if r is not None]
    assert AuthFailure.get(AuthFailure.ip == "198.51.100.7").count == THREADS * per_thread


# ---- the tenant send rate ----


def test_concurrent_sends_never_exceed_the_tenant_send_rate(app, load):
    load(shop_fixture(send_rate_per_minute=3))
    headers = auth_headers("sk_test_acme_token_0001")
    results = at_once(
        lambda i: (
            send(app.test_client(), headers, ticket_id="1001", channel="email", body=f"x{i}").status_code
        )
    )
    assert Counter(results) == {202: 3, 429: THREADS - 3}, results
    assert Message.select().where(Message.direction == "outbound").count() == 3


# ---- webhook delivery claims: one attempt in flight per delivery ----


@pytest.fixture
def subscription(app, client, acme, monkeypatch):
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", "127.0.0.0/8")
    response = client.post(
        "/api/v1/webhooks", headers=acme, json={"url": "https://127.0.0.1:9/hook", "events": ["*"]}
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def pings(client, headers, sub_id: str, count: int) -> list[str]:
    for _ in range(count):
        assert client.post(f"/api/v1/webhooks/{sub_id}/ping", headers=headers).status_code == 202
    return [d.id for d in WebhookDelivery.select().order_by(WebhookDelivery.created_at)]


def test_concurrent_claims_of_a_delivery_take_it_once(client, acme, subscription):
    for delivery_id in pings(client, acme, subscription["id"], 5):
        claimed = at_once(lambda i, d=delivery_id: engine.claim(d, 30))
        assert sum(1 for c in claimed if c is not None and not isinstance(c, Exception)) == 1, claimed


def test_a_claim_waiting_for_another_connections_claim_takes_nothing(app, client, acme, subscription):
    [delivery_id] = pings(client, acme, subscription["id"], 1)
    other = OtherWriter(app.config["DATABASE"])
    until = (clock.now() + timedelta(seconds=60)).isoformat(sep=" ")
    other.execute(f"UPDATE webhook_delivery SET claimed_until = '{until}' WHERE id = '{delivery_id}'")
    thread, outcome = in_thread(lambda: engine.claim(delivery_id, 30))
    other.commit_later()
    thread.join(timeout=30)
    assert outcome == {"result": None}


# ---- message send claims: each due message taken by one claim ----


def test_concurrent_send_claims_take_each_message_once(app, load):
    load(shop_fixture())
    client, headers = app.test_client(), auth_headers("sk_test_acme_token_0001")
    for i in range(24):
        assert send(client, headers, ticket_id="1001", channel="email", body=f"m{i}").status_code == 202
    ids = [m.id for m in Message.select().order_by(Message.id)]
    results = at_once(lambda i: [m.id for m in claim_messages(ids[i * 3], 60)])
    assert not [r for r in results if isinstance(r, Exception)], results
    taken = [message_id for batch in results for message_id in batch]
    assert len(taken) == len(set(taken)), Counter(taken).most_common(3)
    assert Message.select().where(Message.delivery_status == "sending").count() == len(taken)


def test_a_send_claim_waiting_for_another_connections_claim_takes_nothing(app, load):
    load(shop_fixture())
    headers = auth_headers("sk_test_acme_token_0001")
    assert send(app.test_client(), headers, ticket_id="1001", channel="email", body="one").status_code == 202
    message_id = Message.get().id
    other = OtherWriter(app.config["DATABASE"])  # another consumer's claim, not yet committed
    until = (clock.now() + timedelta(seconds=60)).isoformat(sep=" ")
    other.execute(
        f"UPDATE message SET delivery_status = 'sending', claimed_until = '{until}' WHERE id = {message_id}"
    )
    thread, outcome = in_thread(lambda: claim_messages(message_id, 60))
    other.commit_later()
    thread.join(timeout=30)
    assert outcome == {"result": []}


# ---- auto-disable: a subscription is disabled once, and not when it changed meanwhile ----


def test_auto_disable_waits_for_another_writer_and_sees_its_change(app, client, acme, subscription):
    [delivery_id] = pings(client, acme, subscription["id"], 1)
    WebhookDelivery.update(status="dead", created_at=clock.now() - timedelta(days=8)).where(
        WebhookDelivery.id == delivery_id
    ).execute()
    sub = WebhookSubscription.get_by_id(subscription["id"])
    other = OtherWriter(app.config["DATABASE"])  # another worker disabling it right now
    other.execute(f"UPDATE webhook_subscription SET enabled = FALSE WHERE id = '{sub.id}'")

    def disable():
        with write_transaction():
            return engine.maybe_auto_disable(sub)

    thread, outcome = in_thread(disable)
    other.commit_later()
    thread.join(timeout=30)
    assert outcome == {"result": False}  # it saw the other's change: no second disable, no notice
    assert WebhookSubscription.get_by_id(sub.id).last_error is None


# ---- archive-read: a notification marked unread meanwhile stays in the inbox ----


def test_archive_read_rechecks_a_notification_marked_unread_meanwhile(app, load):
    notes = [{"id": n, "type": "mention", "message": f"note {n}", "read": True} for n in (1, 2, 3)]
    load(tenant_fixture("acme", notifications=notes))
    other = OtherWriter(app.config["DATABASE"])  # the owner marks note 2 unread, not yet committed
    other.execute("UPDATE notification SET read = FALSE WHERE id = 2")
    thread, outcome = in_thread(lambda: archive_read("acme", include_unread=False))
    other.commit_later()
    thread.join(timeout=30)
    assert outcome["result"]["archived_count"] == 2, outcome
    kept = Notification.get_by_id(2)
    assert (kept.archived, kept.read) == (False, False)


# ---- lock order: a subscription's row before its deliveries' rows (docs/decisions.md) ----
# Each race below is made deterministic without a hook in the code: another connection holds a
# row the transactions under test need, they queue behind it in a known order (pg_stat_activity
# shows them waiting), and then it lets go. PostgreSQL only: SQLite's write lock has no order.


def waiting_for_locks(
    database: str, count: int, timeout: float = 10, or_finished: threading.Thread | None = None
) -> None:
    """Return once `count` connections of the database wait for a lock, or the thread `or_finished`
    has ended (bounded by `timeout`)."""
    import psycopg

    with psycopg.connect(database, autocommit=True) as probe:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if or_finished is not None and not or_finished.is_alive():
                return
            (waiting,) = probe.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()
            if waiting >= count:
                return
            time.sleep(0.02)
    raise AssertionError(f"{count} connections never waited for a lock together (saw {waiting})")


def answered(status: int) -> engine.Outcome:
    """An attempt's outcome as the endpoint answered it with `status`."""
    reply = webhook_transport.Reply(status=status, body="", ms=1, address="127.0.0.1", headers={})
    return engine.Outcome(reply=reply, address="127.0.0.1", ms=1)


@pytest.mark.postgres_only
@pytest.mark.parametrize("other_status", [500, 410], ids=["a failure", "another 410"])
def test_a_410_recorded_beside_another_attempts_outcome_does_not_deadlock(
    app, client, acme, subscription, other_status
):
    sub_id = subscription["id"]
    gone_id, other_id = pings(client, acme, sub_id, 2)
    gone, other = (engine.start_attempt(delivery_id, app.config) for delivery_id in (gone_id, other_id))
    blocker = OtherWriter(app.config["DATABASE"])  # a third worker noting a failure, not yet committed
    blocker.execute(f"UPDATE webhook_subscription SET last_error = 'HTTP 503' WHERE id = '{sub_id}'")
    # the 410's transaction queues first for the subscription, then the other's: once the third
    # commits, the 410's disable dead-letters the other's delivery, which the other holds (without
    # the lock order) while it waits for the subscription: a cycle PostgreSQL breaks by killing one
    first, first_outcome = in_thread(lambda: engine.conclude(gone, answered(410), app.config))
    waiting_for_locks(app.config["DATABASE"], 1)
    second, second_outcome = in_thread(lambda: engine.conclude(other, answered(other_status), app.config))
    waiting_for_locks(app.config["DATABASE"], 2)
    blocker.commit_later(0)
    first.join(timeout=30)
    second.join(timeout=30)
    assert "error" not in first_outcome and "error" not in second_outcome, (first_outcome, second_outcome)
    sub = WebhookSubscription.get_by_id(sub_id)
    assert not sub.enabled and "410 Gone" in sub.last_error  # a later failure keeps the disable notice
    assert WebhookDelivery.get_by_id(gone_id).status == "dead"
    assert Notification.select().where(Notification.type == "webhook_disabled").count() == 1


@pytest.mark.postgres_only
def test_disabling_a_subscription_while_a_worker_claims_its_delivery_does_not_deadlock(
    app, client, acme, subscription
):
    sub_id = subscription["id"]
    [delivery_id] = pings(client, acme, sub_id, 1)
    engine.start_attempt(delivery_id, app.config)  # a worker killed mid-attempt: its attempt stays started
    WebhookDelivery.update(claimed_until=None).where(WebhookDelivery.id == delivery_id).execute()
    # the next worker's claim marks that attempt interrupted before it writes its own attempt row;
    # holding the old row stops it there, between its claim (the delivery's row) and the foreign
    # key check of its attempt row (a share lock on the subscription's row)
    blocker = OtherWriter(app.config["DATABASE"])
    blocker.execute(f"SELECT 1 FROM webhook_delivery_attempt WHERE delivery_id = '{delivery_id}' FOR UPDATE")
    worker, worker_outcome = in_thread(lambda: engine.start_attempt(delivery_id, app.config))
    waiting_for_locks(app.config["DATABASE"], 1)
    patch, patch_outcome = in_thread(
        lambda: app.test_client().patch(f"/api/v1/webhooks/{sub_id}", headers=acme, json={"enabled": False})
    )
    waiting_for_locks(app.config["DATABASE"], 2)  # the PATCH holds the subscription, waits for the delivery
    blocker.commit_later(0)
    worker.join(timeout=30)
    patch.join(timeout=30)
    assert "error" not in worker_outcome and "error" not in patch_outcome, (worker_outcome, patch_outcome)
    assert patch_outcome["result"].status_code == 200, patch_outcome["result"].get_data(as_text=True)
    assert worker_outcome["result"] is not None  # it claimed the delivery before the disable
    assert WebhookDelivery.get_by_id(delivery_id).status == "dead"


@pytest.mark.postgres_only
def test_a_410_dead_lettering_deliveries_a_batch_is_claiming_does_not_deadlock(
    app, client, acme, subscription
):
    sub_id = subscription["id"]
    gone_id, *others = pings(client, acme, sub_id, 4)
    # three deliveries a batch claims in id order (low, middle, high) while a bulk UPDATE would
    # meet them as stored: high, low, middle (rewritten in that order, created in that order too)
    low, middle, high = ("whd_" + digit * 24 for digit in "123")
    start = clock.now() - timedelta(minutes=1)
    for place, (old_id, new_id) in enumerate(zip(others, (high, low, middle), strict=True)):
        WebhookDelivery.update(id=new_id, created_at=start + timedelta(seconds=place)).where(
            WebhookDelivery.id == old_id
        ).execute()
    gone = engine.start_attempt(gone_id, app.config)
    members = [WebhookDelivery.get_by_id(delivery_id) for delivery_id in (low, middle, high)]
    sub = WebhookSubscription.get_by_id(sub_id)
    blocker = OtherWriter(app.config["DATABASE"])  # holds the middle one: the batch stops after `low`
    blocker.execute(f"UPDATE webhook_delivery SET updated_at = updated_at WHERE id = '{middle}'")
    batch, batch_outcome = in_thread(lambda: engine._start(members, sub, app.config, clock.now()))
    waiting_for_locks(app.config["DATABASE"], 1)
    # the 410 dead-letters the three; taken as stored it holds `high` and waits for `low`, which
    # the batch holds, and the batch, let go on `middle`, then waits for `high`
    first, first_outcome = in_thread(lambda: engine.conclude(gone, answered(410), app.config))
    waiting_for_locks(app.config["DATABASE"], 2)
    blocker.commit_later(0)
    batch.join(timeout=30)
    first.join(timeout=30)
    assert "error" not in batch_outcome and "error" not in first_outcome, (batch_outcome, first_outcome)
    assert len(batch_outcome["result"]) == 3  # claimed before the disable, then dead-lettered
    assert [WebhookDelivery.get_by_id(d).status for d in (gone_id, low, middle, high)] == ["dead"] * 4


@pytest.mark.postgres_only
def test_a_batch_giving_deliveries_back_beside_a_410_dead_lettering_them_does_not_deadlock(
    app, client, acme, subscription
):
    sub_id = subscription["id"]
    gone_id, *others = pings(client, acme, sub_id, 4)
    low, middle, high = ("whd_" + digit * 24 for digit in "123")
    for old_id, new_id in zip(others, (low, middle, high), strict=True):
        WebhookDelivery.update(id=new_id).where(WebhookDelivery.id == old_id).execute()
    gone = engine.start_attempt(gone_id, app.config)
    sub = WebhookSubscription.get_by_id(sub_id)
    members = [WebhookDelivery.get_by_id(delivery_id) for delivery_id in (high, low)]
    unsent = engine._start(members, sub, app.config, clock.now())  # a batch's members, in batch order
    blocker = OtherWriter(app.config["DATABASE"])  # holds `middle`: the 410 stops after `low`
    blocker.execute(f"UPDATE webhook_delivery SET updated_at = updated_at WHERE id = '{middle}'")
    first, first_outcome = in_thread(lambda: engine.conclude(gone, answered(410), app.config))
    waiting_for_locks(app.config["DATABASE"], 1)
    # the batch gives `high` back, then waits for `low`; let go on `middle`, the 410 waits for `high`
    back, back_outcome = in_thread(lambda: engine.release(unsent))
    waiting_for_locks(app.config["DATABASE"], 2)
    blocker.commit_later(0)
    first.join(timeout=30)
    back.join(timeout=30)
    assert "error" not in first_outcome and "error" not in back_outcome, (first_outcome, back_outcome)
    assert [WebhookDelivery.get_by_id(d).status for d in (gone_id, low, middle, high)] == ["dead"] * 4


# ---- retention and recover: a subscription's row first, then its deliveries' rows in id order ----

LOW, MIDDLE, HIGH = ("whd_" + digit * 24 for digit in "123")
LONG_AGO = timedelta(days=40)


def finished_long_ago(client, headers, sub_id: str, stored_as: dict[str, str]) -> None:
    """Deliveries created and last touched LONG_AGO, renamed to the ids of `stored_as` and given
    their statuses one UPDATE each in that order: on PostgreSQL a new row version goes after the
    others, so a scan of the table meets them in that order."""
    then = clock.now() - LONG_AGO
    for old_id, (new_id, status) in zip(
        pings(client, headers, sub_id, len(stored_as)), stored_as.items(), strict=True
    ):
        WebhookDelivery.update(
            id=new_id, status=status, next_attempt_at=None, created_at=then, updated_at=then
        ).where(WebhookDelivery.id == old_id).execute()


def start_recovery(client, headers, sub_id: str) -> str:
    """A running recovery of the subscription's deliveries created around LONG_AGO; its id."""
    around = {
        "since": clock.isoformat(clock.now() - LONG_AGO - timedelta(days=1)),
        "until": clock.isoformat(clock.now() - LONG_AGO + timedelta(days=1)),
    }
    response = client.post(f"/api/v1/webhooks/{sub_id}/recover", headers=headers, json=around)
    assert response.status_code == 202, response.get_data(as_text=True)
    return response.get_json()["id"]


def many_retrying_deliveries(sub_id: str, count: int) -> None:
    """`count` deliveries retrying later (an endpoint down for a while), and fresh statistics: the
    prune then finds the few finished ones through the index on (status, next_attempt_at), in the
    order of their statuses, and the requeue its rows by id in the order they are stored."""
    db.execute_sql(
        "INSERT INTO event (id, tenant_id, type, api_version, data, created) "
        "SELECT 'evt_fill_' || n, tenant_id, type, api_version, data, created "
        "FROM event, generate_series(1, %s) AS n WHERE id = (SELECT min(id) FROM event)",
        (count,),
    )
    db.execute_sql(
        "INSERT INTO webhook_delivery (id, tenant_id, subscription_id, event_id, event_type, payload, "
        "status, attempts, next_attempt_at, created_at, updated_at, run_trigger) "
        "SELECT 'whd_fill_' || substr(id, 10), tenant_id, %s, id, type, data, 'retrying', 3, "
        "created + interval '1 hour', created, created, 'initial' FROM event WHERE id LIKE 'evt_fill_%%'",
        (sub_id,),
    )
    db.execute_sql("ANALYZE webhook_delivery")


def test_a_prune_takes_the_lowest_ids_first(client, acme, subscription):
    finished_long_ago(client, acme, subscription["id"], {HIGH: "dead", LOW: "dead", MIDDLE: "dead"})
    assert next(retention.prune_deliveries(timedelta(days=30), 1)) == 1
    assert {d.id for d in WebhookDelivery.select()} == {MIDDLE, HIGH}


@pytest.mark.postgres_only
def test_a_prune_beside_a_recovery_batch_does_not_deadlock(app, client, acme, subscription):
    sub_id = subscription["id"]
    # the prune meets HIGH first (dead before failed), the requeue's UPDATE LOW (stored first)
    finished_long_ago(client, acme, sub_id, {LOW: "failed", MIDDLE: "failed", HIGH: "dead"})
    many_retrying_deliveries(sub_id, 3000)
    recovery_id = start_recovery(client, acme, sub_id)
    blocker = OtherWriter(app.config["DATABASE"])  # holds MIDDLE: the batch stops after LOW
    blocker.execute(f"SELECT 1 FROM webhook_delivery WHERE id = '{MIDDLE}' FOR UPDATE")
    batch, batch_outcome = in_thread(lambda: recovery.run_batch(recovery_id))
    waiting_for_locks(app.config["DATABASE"], 1)
    # locking rows as its plan met them, the prune held HIGH and waited for LOW, and the batch, let
    # go on MIDDLE, then waited for HIGH; now the prune passes over LOW and MIDDLE (held) and takes
    # HIGH alone, without waiting
    prune, prune_outcome = in_thread(lambda: list(retention.prune_deliveries(timedelta(days=30), 1000)))
    waiting_for_locks(app.config["DATABASE"], 2, or_finished=prune)
    blocker.commit_later(0)
    batch.join(timeout=30)
    prune.join(timeout=30)
    assert "error" not in batch_outcome and "error" not in prune_outcome, (batch_outcome, prune_outcome)
    assert prune_outcome["result"] == [1]
    assert WebhookDelivery.get_or_none(WebhookDelivery.id == HIGH) is None  # pruned: nobody held it
    assert [WebhookDelivery.get_by_id(d).status for d in (LOW, MIDDLE)] == ["pending"] * 2
    assert WebhookRecovery.get_by_id(recovery_id).requeued == 2  # what it re-queued, not what it read


@pytest.mark.postgres_only
def test_a_recovery_batch_takes_its_deliveries_in_id_order(app, client, acme, subscription):
    import psycopg

    sub_id = subscription["id"]
    # a scan of the table (what the requeue's UPDATE does in a table this small) meets HIGH first
    finished_long_ago(client, acme, sub_id, {HIGH: "dead", LOW: "dead", MIDDLE: "dead"})
    recovery_id = start_recovery(client, acme, sub_id)
    blocker = OtherWriter(app.config["DATABASE"])
    blocker.execute(f"SELECT 1 FROM webhook_delivery WHERE id = '{MIDDLE}' FOR UPDATE")
    batch, batch_outcome = in_thread(lambda: recovery.run_batch(recovery_id))
    waiting_for_locks(app.config["DATABASE"], 1)  # the batch waits for MIDDLE: what does it hold?
    with psycopg.connect(app.config["DATABASE"], autocommit=True) as probe:
        held = []
        for delivery_id in (LOW, HIGH):
            try:
                probe.execute(f"SELECT 1 FROM webhook_delivery WHERE id = '{delivery_id}' FOR UPDATE NOWAIT")
            except psycopg.errors.LockNotAvailable:
                held.append(delivery_id)
    blocker.commit_later(0)
    batch.join(timeout=30)
    assert held == [LOW], held
    assert batch_outcome == {"result": False}
    assert [WebhookDelivery.get_by_id(d).status for d in (LOW, MIDDLE, HIGH)] == ["pending"] * 3


@pytest.mark.parametrize(
    "change",
    ["enabled = FALSE", "enabled = FALSE, deleted_at = '2026-01-01 00:00:00'"],
    ids=["disabled", "deleted"],
)
def test_a_recovery_batch_waits_for_a_disable_and_requeues_nothing(app, client, acme, subscription, change):
    sub_id = subscription["id"]
    finished_long_ago(client, acme, sub_id, {LOW: "dead", MIDDLE: "dead", HIGH: "dead"})
    recovery_id = start_recovery(client, acme, sub_id)
    other = OtherWriter(app.config["DATABASE"])  # the owner disabling or deleting it, not yet committed
    other.execute(f"UPDATE webhook_subscription SET {change} WHERE id = '{sub_id}'")
    batch, outcome = in_thread(lambda: recovery.run_batch(recovery_id))
    if on_postgres():  # on SQLite the batch's write transaction waits for the other's
        waiting_for_locks(app.config["DATABASE"], 1, or_finished=batch)
    other.commit_later()
    batch.join(timeout=30)
    assert outcome == {"result": False}
    assert [WebhookDelivery.get_by_id(d).status for d in (LOW, MIDDLE, HIGH)] == ["dead"] * 3
    done = WebhookRecovery.get_by_id(recovery_id)
    assert (done.status, done.requeued) == ("completed", 0)

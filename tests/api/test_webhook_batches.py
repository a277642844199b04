"""A delivery job attempts, in a batch, the due deliveries of its subscription whose jobs wait next
in the queue (issue 17, speed): one claim for all that takes their jobs from the queue, each
outcome recorded before the next request, the batch cut short at the first attempt that does not
succeed, the members not sent given back as they were and requeued. Attempts run in this process
(the job's own entry stays queued: no consumer took it) against a real HTTPS receiver."""

import threading

import pytest

from shop import clock
from shop.db import run_sql
from shop.domain.activity import run_activity
from shop.domain.webhooks import engine
from shop.models import WebhookDelivery, WebhookDeliveryAttempt, WebhookSubscription
from tasks import huey
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.query_plans import sqlite_plan
from tests.helpers.round_trips import counted_round_trips


@pytest.fixture
def shop(load, app, monkeypatch):
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", "127.0.0.0/8")
    monkeypatch.setitem(app.config, "WEBHOOK_RETRY_DELAYS", "0,0,0,0,0,0,0,0")
    load(
        tenant_fixture(
            "acme", customers=[{"id": 1, "display_name": "Ann"}], conversations=[{"id": 10, "customer_id": 1}]
        ),
        tenant_fixture(
            "globex",
            customers=[{"id": 2, "display_name": "Bo"}],
            conversations=[{"id": 20, "customer_id": 2}],
        ),
    )
    return auth_headers("sk_test_acme_token_0001")


def subscribe(client, headers, url) -> str:
    response = client.post("/api/v1/webhooks", headers=headers, json={"url": url, "events": ["*"]})
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()["id"]


def events(count, tenant="acme", conversation=10) -> list[str]:
    """`count` message.received events; the ids of the deliveries they queued, oldest first."""
    for i in range(count):
        data = {"conversation_id": conversation, "channel": "sms", "body": f"{i}"}
        run_activity("message.received", tenant, data)
    rows = WebhookDelivery.select().where(WebhookDelivery.tenant == tenant)
    return [row.id for row in rows.order_by(WebhookDelivery.created_at)]


def log(delivery_id) -> list[tuple]:
    rows = WebhookDeliveryAttempt.select().where(WebhookDeliveryAttempt.delivery == delivery_id)
    return [(row.number, row.trigger, row.status) for row in rows.order_by(WebhookDeliveryAttempt.started_at)]


def untouched(delivery_id) -> bool:
    """Pending, held by no worker, no attempt counted or logged: as the event left it."""
    row = WebhookDelivery.get_by_id(delivery_id)
    return (
        row.status == "pending"
        and row.attempts == 0
        and row.claimed_until is None
        and row.last_attempt_at is None
        and log(delivery_id) == []
    )


def queued() -> list[str]:
    """The delivery ids of the deliver_webhook jobs waiting in the queue."""
    return [task.args[0] for task in huey.pending() if task.name.endswith("deliver_webhook")]


def test_one_job_sends_the_due_deliveries_of_its_subscription_each_recorded(
    client, shop, app, start_receiver
):
    receiver = start_receiver()
    subscribe(client, shop, receiver.hook_url())
    ids = events(3)
    assert engine.attempt_batch(ids[0], app.config) == []
    assert len(receiver.events()) == 3
    sent = {event["body"]["id"] for event in receiver.events()}
    assert sent == {WebhookDelivery.get_by_id(i).event_id for i in ids}
    for delivery_id in ids:
        row = WebhookDelivery.get_by_id(delivery_id)
        assert (row.status, row.attempts, row.claimed_until) == ("delivered", 1, None)
        assert log(delivery_id) == [(1, "initial", "succeeded")]
    assert queued() == [ids[0]]  # the others' jobs left the queue with their claim
    # a job of a delivery already done (a sweep's, say) sends nothing
    assert engine.attempt_batch(ids[1], app.config) == [] and len(receiver.events()) == 3


def test_only_deliveries_whose_jobs_are_queued_join_a_batch(client, shop, app, start_receiver):
    receiver = start_receiver()
    subscribe(client, shop, receiver.hook_url())
    ids = events(3)
    huey.flush()  # queued jobs lost: the sweep would queue them again
    assert engine.attempt_batch(ids[0], app.config) == []
    assert len(receiver.events()) == 1
    assert untouched(ids[1]) and untouched(ids[2])


def test_a_batch_holds_one_subscription_of_one_tenant_only(client, shop, app, start_receiver):
    receiver = start_receiver()
    subscribe(client, shop, receiver.hook_url())
    subscribe(client, shop, receiver.hook_url() + "-second")
    other = subscribe(client, auth_headers("sk_test_globex_token_0001"), receiver.hook_url())
    acme = events(2)
    globex = events(2, tenant="globex", conversation=20)
    mine = WebhookDelivery.get_by_id(acme[0]).subscription_id
    engine.attempt_batch(acme[0], app.config)
    sent = [d for d in acme + globex if WebhookDelivery.get_by_id(d).status == "delivered"]
    assert sorted(sent) == sorted(d for d in acme if WebhookDelivery.get_by_id(d).subscription_id == mine)
    assert all(untouched(d) for d in globex)
    assert WebhookSubscription.get_by_id(other).tenant_id == "globex"


def test_the_batch_stops_at_a_failure_and_gives_the_rest_back_requeued(client, shop, app, start_receiver):
    receiver = start_receiver(script=[(200, {"ok": True}), (500, {"error": "down"})])
    subscribe(client, shop, receiver.hook_url())
    ids = events(4)
    assert engine.attempt_batch(ids[0], app.config) == [(ids[1], 0)]  # its retry, for the job to schedule
    assert len(receiver.events()) == 2
    assert WebhookDelivery.get_by_id(ids[0]).status == "delivered"
    failed = WebhookDelivery.get_by_id(ids[1])
    assert (failed.status, failed.attempts, failed.last_status_code) == ("retrying", 1, 500)
    assert log(ids[1]) == [(1, "initial", "failed")]
    assert untouched(ids[2]) and untouched(ids[3])  # never sent: uncounted, no attempt in the log
    assert sorted(queued()) == sorted([ids[0], *ids[2:]])  # their jobs had left with the claim: queued again
    assert engine.attempt_batch(ids[2], app.config) == []  # a later job sends them
    assert len(receiver.events()) == 4 and log(ids[3]) == [(1, "initial", "succeeded")]


def test_a_410_in_a_batch_disables_and_leaves_no_attempt_started(client, shop, app, start_receiver):
    receiver = start_receiver(script=[(200, {"ok": True}), (410, {"error": "gone"})])
    sub_id = subscribe(client, shop, receiver.hook_url())
    ids = events(4)
    engine.attempt_batch(ids[0], app.config)
    assert not WebhookSubscription.get_by_id(sub_id).enabled
    assert [WebhookDelivery.get_by_id(i).status for i in ids] == ["delivered", "dead", "dead", "dead"]
    assert WebhookDeliveryAttempt.select().where(WebhookDeliveryAttempt.status == "started").count() == 0
    assert [WebhookDelivery.get_by_id(i).attempts for i in ids] == [1, 1, 0, 0]


def test_members_not_sent_within_the_claims_margin_go_back(client, shop, app, start_receiver, monkeypatch):
    monkeypatch.setattr(engine, "HOLD_MARGIN", 0)  # every member after the first is already late
    receiver = start_receiver()
    subscribe(client, shop, receiver.hook_url())
    ids = events(3)
    assert engine.attempt_batch(ids[0], app.config) == []
    assert len(receiver.events()) == 1 and WebhookDelivery.get_by_id(ids[0]).status == "delivered"
    assert untouched(ids[1]) and untouched(ids[2])
    assert sorted(queued()) == sorted(ids)


def test_a_batch_takes_at_most_its_size_and_only_what_is_due(client, shop, app, start_receiver):
    receiver = start_receiver()
    subscribe(client, shop, receiver.hook_url())
    ids = events(5)
    later = WebhookDelivery.get_by_id(ids[4])
    WebhookDelivery.update(next_attempt_at=later.created_at.replace(year=2100)).where(
        WebhookDelivery.id == later.id
    ).execute()
    assert engine.attempt_batch(ids[0], app.config, size=3) == []
    assert len(receiver.events()) == 3
    assert [WebhookDelivery.get_by_id(i).status for i in ids] == ["delivered"] * 3 + ["pending"] * 2
    assert sorted(queued()) == sorted([ids[0], ids[3], ids[4]])  # the jobs of what it did not take stay
    assert engine.attempt_batch(ids[3], app.config) == []
    assert [WebhookDelivery.get_by_id(i).status for i in ids] == ["delivered"] * 4 + ["pending"]  # not due
    assert ids[4] in queued()


def test_batches_racing_over_the_same_deliveries_send_each_once(client, shop, app, start_receiver):
    receiver = start_receiver()
    subscribe(client, shop, receiver.hook_url())
    ids = events(8)
    barrier, results = threading.Barrier(4), [None] * 4

    def leader(i):  # four jobs at once, each seeing the others' deliveries queued behind its own
        barrier.wait(timeout=20)
        try:
            results[i] = engine.attempt_batch(ids[i], app.config)
        except Exception as error:  # noqa: BLE001  (the assertion names it)
            results[i] = error

    threads = [threading.Thread(target=leader, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert results == [[]] * 4  # none failed (on PostgreSQL the claims lock rows in id order)
    assert sorted(e["body"]["id"] for e in receiver.events()) == sorted(
        WebhookDelivery.get_by_id(i).event_id for i in ids
    )
    assert all(log(i) == [(1, "initial", "succeeded")] for i in ids)


# on PostgreSQL each round trip to the server costs the consumer a socket wait and CPU on both sides
# (issue 13): these count them from libpq's trace of the app's connection, in this thread


@pytest.mark.postgres_only
def test_a_job_of_one_delivery_costs_four_round_trips_on_postgres(client, shop, app, start_receiver):
    receiver = start_receiver()
    subscribe(client, shop, receiver.hook_url())
    (delivery_id,) = events(1)
    huey.flush()  # the consumer took the job: no other job is queued
    with counted_round_trips() as trips:
        assert engine.attempt_batch(delivery_id, app.config) == []
    assert WebhookDelivery.get_by_id(delivery_id).status == "delivered"
    assert log(delivery_id) == [(1, "initial", "succeeded")]
    # the delivery and the queue's next jobs read together; BEGIN and the claim; the attempt row
    # with the COMMIT; BEGIN, the outcome's writes and the COMMIT together
    assert trips.count == 4, trips.trace


@pytest.mark.postgres_only
@pytest.mark.parametrize(
    "answers, status, note",
    [
        ([(500, {"error": "down"})], "retrying", "HTTP 500"),
        ([(500, {"error": "down"}), (200, {"ok": True})], "delivered", None),
    ],
    ids=["a failure noted on the subscription", "a success that clears the failure before it"],
)
def test_recording_an_outcome_is_one_round_trip_on_postgres(
    client, shop, app, start_receiver, answers, status, note
):
    receiver = start_receiver(script=answers)
    sub_id = subscribe(client, shop, receiver.hook_url())
    (delivery_id,) = events(1)
    for _ in answers[1:]:  # the failures before the attempt counted
        engine.attempt(delivery_id, app.config)
    started = engine.start_attempt(delivery_id, app.config)
    outcome = engine.send(started, app.config)
    with counted_round_trips() as trips:
        engine.conclude(started, outcome, app.config)
    assert WebhookDelivery.get_by_id(delivery_id).status == status
    assert WebhookSubscription.get_by_id(sub_id).last_error == note
    assert log(delivery_id)[-1][2] == ("succeeded" if status == "delivered" else "failed")
    assert trips.count == 1, trips.trace  # BEGIN, the writes and the COMMIT in one


@pytest.mark.postgres_only
def test_a_batch_claims_its_deliveries_in_one_round_trip_on_postgres(client, shop, app, start_receiver):
    receiver = start_receiver()
    subscribe(client, shop, receiver.hook_url())
    ids = events(3)
    with counted_round_trips() as trips:
        assert engine.attempt_batch(ids[0], app.config) == []
    assert len(receiver.events()) == 3
    assert all(log(delivery_id) == [(1, "initial", "succeeded")] for delivery_id in ids)
    # the delivery and the queue read together; the other members; BEGIN and the three claims; the
    # attempt rows and the jobs taken with the COMMIT; then one round trip per outcome
    assert trips.count == 4 + 3, trips.trace


@pytest.mark.sqlite_only  # the planner in question: PostgreSQL's plans follow its statistics
def test_a_batch_reads_its_members_by_their_ids_however_many_are_due(client, shop, app, start_receiver):
    """The members' read looks the queued deliveries up by id: never through the index of due
    deliveries (every due delivery of every subscription) nor the subscription's (all its deliveries)."""
    receiver = start_receiver()
    sub_id = subscribe(client, shop, receiver.hook_url())
    ids = events(12)
    statement, params = engine.members_statement(ids[1:], sub_id, clock.now(), engine.BATCH_SIZE - 1)
    plan = sqlite_plan(statement, params)
    assert "sqlite_autoindex_webhook_delivery_1" in plan, plan
    assert "status_next_attempt_at" not in plan and "subscription_id" not in plan, plan
    assert [row[0] for row in run_sql(statement, params)] == ids[1 : engine.BATCH_SIZE]

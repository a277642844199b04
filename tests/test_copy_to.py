"""`flask shop copy-to URL`: a shop's database moved into an empty PostgreSQL database serves the same
answers, every table (the queue's jobs too) is copied and counted, and a non-empty target is refused."""

import json
from datetime import timedelta
from importlib import resources

import pytest

from shop import clock, create_app
from shop.cli import DEMO_READS, demo_booking
from shop.db import db, on_postgres
from shop.domain import heartbeat
from shop.domain.activity import run_activity
from shop.domain.fixtures import load_fixture
from shop.domain.webhooks import engine
from shop.models import ALL_MODELS
from shop.platform import usage_log
from shop.queue import setup
from shop.transfer import POSTGRES_QUEUE
from tasks import huey
from tasks.webhooks import sweep_webhooks
from tests.helpers import auth_headers, backends
from tests.helpers.console import sign_in as console_sign_in

DEMO = auth_headers("sk_test_acme_demo_0001")
API = "/api/v1"


@pytest.fixture
def target(request):
    """A new, empty PostgreSQL database on the test server (dropped after the test)."""
    return backends.throwaway_postgres_database(request)


@pytest.fixture
def busy_shop(client, app, monkeypatch):
    """The demo shop plus activity: a message queued for sending, a webhook delivery attempted once
    and a recovery counted, an appointment hold, an idempotency record, usage rows, an auth failure,
    a refund, queue entries, a console session, a calendar feed."""
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", "127.0.0.0/8")
    load_fixture(json.loads(resources.files("shop").joinpath("demo/demo_shop.json").read_text()))
    sub = client.post(
        f"{API}/webhooks", headers=DEMO, json={"url": "https://127.0.0.1:9/hook", "events": ["*"]}
    ).get_json()
    ping = client.post(f"{API}/webhooks/{sub['id']}/ping", headers=DEMO)
    assert ping.status_code == 202
    engine.attempt(ping.get_json()["id"], app.config)  # refused at port 9: an attempt in the log, retrying
    recovery = client.post(
        f"{API}/webhooks/{sub['id']}/recover",
        headers=DEMO,
        json={"since": "2026-01-01T00:00:00Z", "dry_run": True},
    )
    assert recovery.status_code == 202  # a recovery row
    sent = client.post(
        f"{API}/messages/send",
        headers={**DEMO, "Idempotency-Key": "copy-to-send-0001"},
        json={"ticket_id": "1001", "channel": "sms", "content": "Ready", "to": "+15555550100"},
    )
    assert sent.status_code in (200, 201, 202), sent.get_data(as_text=True)
    feed = client.post(f"{API}/appointments/calendar_feeds", headers=DEMO, json={"description": "Desk"})
    assert feed.status_code == 201, feed.get_data(as_text=True)
    free = demo_booking()
    held = client.post(
        f"{API}/appointments/slots/holds",
        headers=DEMO,
        json={"date": free["scheduled_date"], "time": free["scheduled_time"]},
    )
    assert held.status_code == 201, held.get_data(as_text=True)
    run_activity("message.received", "acme", {"conversation_id": 10, "channel": "sms", "body": "Thanks"})
    run_activity("payment.refunded", "acme", {"payment_id": 4001, "amount": 1000})
    later = sweep_webhooks.s()
    later.eta = clock.now() + timedelta(hours=1)
    huey.add_schedule(later)  # a job the consumer put aside for later (the queue's schedule table)
    huey.put("copy-to-test", {"kept": True})  # a value in the queue's key-value table
    huey.storage.incr("copy-to-test")  # and a counter
    assert client.get(f"{API}/me", headers=auth_headers("sk_test_wrong_token_0001")).status_code == 401
    heartbeat.beat(heartbeat.new_consumer_id(), periodic=True, started_at=clock.now())  # a consumer's row
    console_sign_in(app.test_client(), "sk_test_acme_demo_0001")  # a console session
    usage_log.buffer.flush()
    return sub


def table_counts(database) -> dict:
    """Rows of each of the app's and the queue's tables, under the PostgreSQL table names."""
    queue = POSTGRES_QUEUE if database is None or on_postgres() else {n: n for n in POSTGRES_QUEUE}
    counts = {model._meta.table_name: model.select().count() for model in ALL_MODELS}
    counts.update(
        {
            POSTGRES_QUEUE[name]: db.execute_sql(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for name, table in queue.items()
        }
    )
    return counts


def answers(client, sub_id: str) -> dict:
    """The bodies of the list endpoints (usage first: the reads below are logged as usage)."""
    day = clock.now().date().isoformat()
    paths = ["/usage?by_key=true"] + [p.format(day=day) for p in DEMO_READS if not p.startswith("/usage")]
    paths += [f"/webhooks/{sub_id}/deliveries", "/customers?limit=100", "/appointments?limit=100"]
    bodies = {}
    for path in paths:
        response = client.get(API + path, headers=DEMO)
        assert response.status_code == 200, (path, response.get_data(as_text=True))
        bodies[path] = response.get_json()
    bodies["/usage?by_key=true"].pop("window")  # "until" is the moment of the read
    return bodies


def test_a_copied_database_serves_the_same_answers_and_counts(app, client, runner, busy_shop, target):
    before = table_counts(db)
    empty = [table for table, count in before.items() if not count]
    assert empty == [], f"the shop should hold rows in every table: {empty}"
    result = runner.invoke(args=["shop", "copy-to", target])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert printed["verified"] is True and printed["tables"] == before
    source_answers = answers(client, busy_shop["id"])
    usage_log.buffer.flush()  # the reads' usage rows into the source, before the switch
    copy = create_app({"TESTING": True, "DATABASE": target})  # points the shared database at the copy
    try:
        assert table_counts(db) == before  # the queue's pending jobs too
        copied_answers = answers(copy.test_client(), busy_shop["id"])
        # the id sequences moved past the copied ids: a new row gets a new id
        newest = max(row["id"] for row in copied_answers["/appointments?limit=100"]["data"])
        created = copy.test_client().post(f"{API}/appointments", headers=DEMO, json=demo_booking())
        assert created.status_code == 201, created.get_data(as_text=True)
        assert created.get_json()["id"] > newest
        usage_log.buffer.flush()
    finally:
        setup(app.config)  # back to the pass's database
    assert copied_answers == source_answers


def test_a_target_holding_rows_is_refused_and_nothing_is_written(app, runner, busy_shop, target):
    assert runner.invoke(args=["shop", "copy-to", target]).exit_code == 0
    copy = create_app({"TESTING": True, "DATABASE": target})
    try:
        snapshot = backends.database_dump()
    finally:
        setup(app.config)
    again = runner.invoke(args=["shop", "copy-to", target])
    assert again.exit_code == 1
    assert "nothing was copied" in again.output and "not empty" in again.output
    create_app({"TESTING": True, "DATABASE": target})
    try:
        assert backends.database_dump() == snapshot
    finally:
        setup(app.config)
    assert copy is not None


def test_a_target_that_is_not_postgresql_is_refused(runner, tmp_path):
    result = runner.invoke(args=["shop", "copy-to", str(tmp_path / "other.sqlite3")])
    assert result.exit_code == 1 and "must be a PostgreSQL URL" in result.output

"""The database goes away or cannot take a write: the request is answered 503 service_unavailable
with Retry-After (never 500), nothing half-done is kept, and the next request works again without
a restart. Real faults: a PostgreSQL backend terminated by the server (pg_terminate_backend, what a
restart does to every connection), SQLite's write lock held by another connection."""

import sqlite3
import threading
import time

import pytest
from peewee import OperationalError

from shop.db import db, unavailable, writer_gate
from shop.models import Customer, IdempotencyRecord
from tests.helpers import backends
from tests.helpers.processes import wait_until


def post(client, headers, body, key=None):
    extra = {"Idempotency-Key": key} if key else {}
    return client.post("/api/v1/_probe", json=body, headers={**headers, **extra})


def assert_unavailable(response):
    assert response.status_code == 503, response.get_data(as_text=True)
    assert response.headers["Retry-After"].isdigit() and int(response.headers["Retry-After"]) >= 1
    error = response.get_json()["error"]
    assert error["type"] == "service_unavailable_error"
    assert error["code"] == "service_unavailable"
    assert error["request_id"] == response.headers["X-Request-Id"]


def _admin():
    import psycopg

    return psycopg.connect(backends.server_url(), autocommit=True)


def _terminate(pid: int) -> None:
    """Have the server end a backend, as a restart (`pg_ctl restart -m fast`) ends every one."""
    with _admin() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        wait_until(
            lambda: not admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone(),
            timeout=10,
            interval=0.02,
        )


@pytest.mark.postgres_only
def test_a_connection_the_server_ended_while_idle_is_replaced_before_the_next_request(client, acme):
    assert post(client, acme, {"display_name": "Ann"}).status_code == 201
    before = db.execute_sql("SELECT pg_backend_pid()").fetchone()[0]
    _terminate(before)
    # no 503 either: the hung-up socket is seen before a statement is sent on it
    assert post(client, acme, {"display_name": "Bob"}).status_code == 201
    assert client.get("/api/v1/health").status_code == 200
    assert db.execute_sql("SELECT pg_backend_pid()").fetchone()[0] != before
    assert Customer.select().count() == 2


@pytest.mark.postgres_only
def test_a_connection_lost_inside_the_transaction_is_a_503_and_the_retry_runs_once(app, acme):
    database = app.config["DATABASE"].rsplit("/", 1)[1]
    answers = []

    def slow_write():
        with app.test_client() as client:
            answers.append(post(client, acme, {"display_name": "Ann", "delay_ms": 1500}, key="cut-1"))

    writer = threading.Thread(target=slow_write)
    writer.start()
    with _admin() as admin:  # the request's backend, idle in its transaction while the view sleeps
        find = (
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND state = 'idle in transaction' "
            "AND pid <> pg_backend_pid()"
        )
        pid = wait_until(lambda: admin.execute(find, (database,)).fetchone(), timeout=10, interval=0.02)[0]
    _terminate(pid)
    writer.join(15)
    assert_unavailable(answers[0])  # its next statement went to a dead connection: not a 500
    assert Customer.select().count() == 0 and IdempotencyRecord.select().count() == 0
    with app.test_client() as client:
        again = post(client, acme, {"display_name": "Ann", "delay_ms": 1500}, key="cut-1")
        assert again.status_code == 201 and "Idempotent-Replayed" not in again.headers
        replayed = post(client, acme, {"display_name": "Ann", "delay_ms": 1500}, key="cut-1")
        assert replayed.headers["Idempotent-Replayed"] == "true"
    assert Customer.select().count() == 1


@pytest.fixture
def short_busy_timeout(monkeypatch):
    """This thread's SQLite connection and the writer gate wait 0.3 s for the write lock, not 10 s."""
    monkeypatch.setattr(writer_gate, "timeout", 0.3)
    db.execute_sql("PRAGMA busy_timeout = 300")
    yield
    db.execute_sql("PRAGMA busy_timeout = 10000")


@pytest.mark.sqlite_only
def test_a_write_lock_held_past_the_busy_timeout_is_a_503_and_nothing_is_written(
    app, client, acme, short_busy_timeout
):
    assert post(client, acme, {"display_name": "Ann"}).status_code == 201
    holder = sqlite3.connect(app.config["DATABASE"], isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another program writing, outside the writer gate
    try:
        started = time.monotonic()
        assert_unavailable(post(client, acme, {"display_name": "Bob"}, key="locked-1"))
        assert time.monotonic() - started < 5
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert Customer.select().count() == 1 and IdempotencyRecord.select().count() == 0
    # the lock gone, the same request with its key runs, once
    assert post(client, acme, {"display_name": "Bob"}, key="locked-1").status_code == 201
    assert (
        post(client, acme, {"display_name": "Bob"}, key="locked-1").headers["Idempotent-Replayed"] == "true"
    )
    assert Customer.select().count() == 2


def test_a_mistake_in_a_statement_is_not_taken_for_an_unavailable_database(app):
    with pytest.raises(Exception) as raised:
        db.execute_sql("SELECT no_such_column FROM customer")
    assert not unavailable(raised.value)
    assert unavailable(OperationalError("database is locked"))

"""Payments racing for the last amount due, and refunds for what is left of a payment: one records.

The lock is the invoice's row for a payment and the payment's row for a refund (SELECT ... FOR UPDATE
on PostgreSQL; SQLite's write transaction already excludes every other writer).
"""

import threading
import time
from collections import Counter

import pytest

from shop.db import on_postgres
from shop.domain import actor
from shop.domain.records.invoices import refund_payment_by_id, take_payment
from shop.models import Event, Payment, Refund
from shop.platform.errors import ApiError
from tests.helpers.money import ACME, acme_fixture

THREADS = 6
INVOICE = {"id": 3001, "ticket_id": 1001, "status": "sent", "total": 10000}


@pytest.fixture
def shop(load):
    load(acme_fixture(invoices=[INVOICE], payments=[{"id": 4001, "invoice_id": 3001, "amount": 6000}]))
    Event.delete().execute()


def race(app, path: str, body: dict) -> Counter:
    """Fire THREADS posts at once, each from its own thread (and so its own database connection)."""
    barrier = threading.Barrier(THREADS)
    results, lock = Counter(), threading.Lock()

    def one():
        client = app.test_client()
        barrier.wait(timeout=10)
        response = client.post(path, json=body, headers=ACME)
        code = (response.get_json().get("error") or {}).get("code", "") if response.status_code >= 400 else ""
        with lock:
            results[f"{response.status_code} {code}".strip()] += 1

    threads = [threading.Thread(target=one) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_payments_racing_for_the_last_amount_due_record_one(app, shop):
    results = race(app, "/api/v1/payments", {"invoice_id": "3001", "amount": 4000, "method": "card"})
    assert results == Counter({"201": 1, "422 unprocessable": THREADS - 1}), results
    assert Payment.select().where(Payment.invoice == 3001).count() == 2
    assert sorted(e.type for e in Event.select()) == ["invoice.paid", "payment.recorded"]


def test_refunds_racing_for_what_is_left_record_one(app, shop):
    results = race(app, "/api/v1/refunds", {"payment_id": "4001", "amount": 6000})
    assert results == Counter({"201": 1, "422 unprocessable": THREADS - 1}), results
    assert Refund.select().where(Refund.payment == 4001).count() == 1
    assert sorted(e.type for e in Event.select()) == ["invoice.refunded", "payment.refunded"]


def other_writer(database: str, lock_sql: str, write_sql: str):
    """A connection of another process inside a write transaction that took the row lock our code
    takes (SQLite: the write lock itself) and wrote; committed by the caller."""
    if not on_postgres():
        import sqlite3

        other = sqlite3.connect(database, isolation_level=None, timeout=10)
        other.execute("BEGIN IMMEDIATE")
    else:
        import psycopg

        other = psycopg.connect(database, autocommit=True)
        other.execute("BEGIN")
        other.execute(lock_sql)
    other.execute(write_sql)
    return other


def run_meanwhile(other, call) -> dict:
    """Start `call` in a thread while `other` holds its lock, commit `other`, and return the outcome."""
    results = {}

    def target():
        try:
            results["done"] = call()
        except Exception as error:  # noqa: BLE001  (the assertions name it)
            results["error"] = error

    thread = threading.Thread(target=target)
    thread.start()
    time.sleep(0.5)
    other.execute("COMMIT")
    other.close()
    thread.join(timeout=30)
    return results


def test_a_payment_waits_for_a_payment_in_flight_and_then_sees_nothing_due(app, shop):
    # another process pays the rest while holding the invoice's row: our payment must wait for that
    # commit and then refuse, never read the old amount due and pay it a second time
    other = other_writer(
        app.config["DATABASE"],
        "SELECT id FROM invoice WHERE id = 3001 FOR UPDATE",
        "INSERT INTO payment (tenant_id, invoice_id, amount, method, created_at) "
        "VALUES ('acme', 3001, 4000, 'cash', '2026-11-25 12:00:00')",
    )
    results = run_meanwhile(
        other,
        lambda: take_payment("acme", actor.api_key("key_acme"), 3001, {"amount": 4000, "method": "card"}),
    )
    error = results.get("error")
    assert isinstance(error, ApiError) and error.code == "unprocessable", results
    assert Payment.select().where(Payment.invoice == 3001).count() == 2 and Event.select().count() == 0


def test_a_refund_waits_for_a_refund_in_flight_and_then_sees_nothing_left(app, shop):
    other = other_writer(
        app.config["DATABASE"],
        "SELECT id FROM payment WHERE id = 4001 FOR UPDATE",
        "INSERT INTO refund (tenant_id, payment_id, amount, created_at) "
        "VALUES ('acme', 4001, 6000, '2026-11-25 12:00:00')",
    )
    results = run_meanwhile(
        other, lambda: refund_payment_by_id("acme", actor.api_key("key_acme"), 4001, 1, None)
    )
    error = results.get("error")
    assert isinstance(error, ApiError) and error.code == "unprocessable", results
    assert Refund.select().where(Refund.payment == 4001).count() == 1 and Event.select().count() == 0

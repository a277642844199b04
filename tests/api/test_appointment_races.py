"""Two creates racing for the last place in a slot: exactly one wins, the other gets slot_unavailable."""

import threading
from collections import Counter

from schemas.appointments import AppointmentCreateSchema
from shop.db import on_postgres
from shop.domain.appointments.appointments import create_appointment
from shop.models import Appointment, Event
from shop.platform.errors import ApiError
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.appointments import BASE, BOOKING, NEW, set_clock

THREADS = 6


def race(app, headers, body) -> Counter:
    """Fire THREADS creates at once, each from its own thread (and so its own database connection)."""
    barrier = threading.Barrier(THREADS)
    results = Counter()
    lock = threading.Lock()

    def one():
        client = app.test_client()
        barrier.wait(timeout=10)
        response = client.post(BASE, json=body, headers=headers)
        code = (response.get_json().get("error") or {}).get("code", "") if response.status_code >= 400 else ""
        with lock:
            results[f"{response.status_code} {code}".strip()] += 1

    threads = [threading.Thread(target=one) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def other_booking_process(database: str, tenant: str, day: str):
    """A connection of another process, inside a write transaction holding the lock a booking of
    `day` takes: SQLite's write lock, or on PostgreSQL the advisory lock of the tenant's day."""
    if not on_postgres():
        import sqlite3

        other = sqlite3.connect(database, isolation_level=None, timeout=10)
        other.execute("BEGIN IMMEDIATE")
        return other
    import psycopg

    other = psycopg.connect(database, autocommit=True)
    other.execute("BEGIN")
    other.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"slot-capacity:{tenant}:{day}",))
    return other


def test_concurrent_creates_for_the_last_place_never_both_succeed(app, load):
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking={**BOOKING, "capacity": 1}))
    headers = auth_headers("sk_test_acme_token_0001")
    for time in ("09:00", "10:00", "11:00"):
        results = race(app, headers, {**NEW, "scheduled_time": time})
        assert results == Counter({"201": 1, "409 slot_unavailable": THREADS - 1}), results
    assert Appointment.select().count() == 3
    assert Event.select().where(Event.type == "appointment.created").count() == 3


def test_a_create_waits_for_a_writer_holding_the_last_place_and_then_sees_it_taken(app, load):
    # another process books the last place and holds its write lock while our create arrives:
    # the create must wait for that commit and then refuse, never read the old state and book too
    import time

    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking={**BOOKING, "capacity": 1}))
    other = other_booking_process(app.config["DATABASE"], "acme", "2026-12-01")
    other.execute(
        "INSERT INTO appointment (tenant_id, customer_name, customer_phone, scheduled_date, "
        "scheduled_time, duration_minutes, status, created_at) VALUES "
        "('acme', 'Other', '1', '2026-12-01', '10:00', 30, 'scheduled', '2026-11-25 12:00:00')"
    )
    results = {}

    def book():
        # the domain function itself: the HTTP path would already queue on the rate-limit write first
        try:
            results["created"] = create_appointment("acme", body)
        except Exception as error:  # noqa: BLE001  (the assertion below names it)
            results["error"] = error

    body = AppointmentCreateSchema().load(NEW)
    thread = threading.Thread(target=book)
    thread.start()
    time.sleep(0.5)
    other.execute("COMMIT")
    other.close()
    thread.join(timeout=30)
    error = results.get("error")
    assert isinstance(error, ApiError) and error.code == "slot_unavailable", results
    assert Appointment.select().count() == 1 and Event.select().count() == 0

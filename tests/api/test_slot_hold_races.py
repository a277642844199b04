"""Holds racing for the last place: from threads, and from separate processes on the shared database."""

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter

from shop import clock
from shop.models import Appointment, Event, SlotHold
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.appointments import BASE, BOOKING, HOLDS, NEW, set_clock
from tests.helpers.processes import ROOT

THREADS = 6
PROCESSES = 4
ACME = auth_headers("sk_test_acme_token_0001")
HOLD = {"date": "2026-12-01", "time": "10:00"}


def at_once(app, requests: list) -> Counter:
    """Send each (path, body) from its own thread (its own connection), all released together."""
    barrier = threading.Barrier(len(requests))
    results, lock = Counter(), threading.Lock()

    def one(path, body):
        client = app.test_client()
        barrier.wait(timeout=10)
        response = client.post(path, json=body, headers=ACME)
        error = response.get_json().get("error") or {} if response.status_code >= 400 else {}
        with lock:
            results[f"{path.rsplit('/', 1)[-1]} {response.status_code} {error.get('code', '')}".strip()] += 1

    threads = [threading.Thread(target=one, args=request) for request in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def one_place(load) -> None:
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking={**BOOKING, "capacity": 1}))


def test_concurrent_holds_for_the_last_place_grant_exactly_one(app, load):
    one_place(load)
    for time_ in ("09:00", "10:00", "11:00"):
        results = at_once(app, [(HOLDS, {**HOLD, "time": time_})] * THREADS)
        assert results == Counter({"holds 201": 1, "holds 409 slot_unavailable": THREADS - 1}), results
    assert SlotHold.select().count() == 3


def test_holds_and_bookings_racing_for_the_last_place_never_both_win(app, load):
    one_place(load)
    for time_ in ("09:00", "10:00", "11:00", "13:00"):
        requests = [(HOLDS, {**HOLD, "time": time_}), (BASE, {**NEW, "scheduled_time": time_})] * 3
        results = at_once(app, requests)
        assert sum(count for key, count in results.items() if " 201" in key) == 1, results
    taken = SlotHold.select().count() + Appointment.select().count()
    assert taken == 4


def test_two_bookings_with_one_hold_book_once(app, load, client):
    one_place(load)
    held = client.post(HOLDS, json=HOLD, headers=ACME).get_json()
    body = {**NEW, "hold_id": held["id"]}
    results = at_once(app, [(BASE, body)] * THREADS)
    assert results == Counter({"appointments 201": 1, "appointments 409 hold_consumed": THREADS - 1}), results
    assert Appointment.select().count() == 1
    assert Event.select().where(Event.type == "appointment.created").count() == 1


def test_holds_from_separate_processes_for_the_last_place_grant_exactly_one(app, load):
    """Each process opens the database itself: on SQLite the write lock serialises them, on
    PostgreSQL (the suite's PostgreSQL pass) the lock on the tenant's day."""
    one_place(load)
    env = {**os.environ, "SHOP_CLOCK_OFFSET": str(clock.timestamp() - time.time())}
    start = time.time() + 3  # every process has started and opened the database by then
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.helpers.hold_racer",
                app.config["DATABASE"],
                str(start),
                json.dumps(HOLD),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    outcomes = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        outcomes.append(out.split()[0] + " " + out.split()[1] if out.startswith("409") else out.split()[0])
    assert Counter(outcomes) == Counter({"201": 1, "409 slot_unavailable": PROCESSES - 1}), outcomes
    assert SlotHold.select().count() == 1

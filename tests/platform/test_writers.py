"""Writers of the one database file: the writer gate, and jobs enqueued inside app transactions."""

import fcntl
import os
import select
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from peewee import OperationalError

from shop.db import db, on_postgres, write_transaction, writer_gate
from tasks import huey
from tasks.maintenance import prune_idempotency_records

ROOT = Path(__file__).resolve().parents[2]
HOLD_SECONDS = 0.3
# the writer gate is SQLite's machinery: PostgreSQL has no single writer to queue for
sqlite_only = pytest.mark.sqlite_only


@sqlite_only
def test_a_writer_waits_while_another_thread_holds_the_gate(app):
    entered = threading.Event()

    def other_writer():
        with writer_gate.held():
            entered.set()

    with write_transaction():
        thread = threading.Thread(target=other_writer)
        thread.start()
        assert not entered.wait(HOLD_SECONDS)  # queued behind this transaction
    assert entered.wait(10)  # and let in as soon as it committed
    thread.join(10)


@sqlite_only
def test_a_writer_in_another_process_waits_for_the_gate(app):
    script = (
        "import sys; from shop.db import init_database, writer_gate; init_database(sys.argv[1]); "
        "print('waiting', flush=True)\nwith writer_gate.held(): print('entered', flush=True)"
    )
    with writer_gate.held():
        child = subprocess.Popen(
            [sys.executable, "-c", script, db.database],
            cwd=ROOT,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert child.stdout.readline().strip() == "waiting"
        with pytest.raises(subprocess.TimeoutExpired):
            child.communicate(timeout=HOLD_SECONDS)
    out, err = child.communicate(timeout=30)
    assert out.strip() == "entered", err


@sqlite_only
def test_nested_writes_pass_the_gate_once(app, monkeypatch):
    monkeypatch.setattr(writer_gate, "timeout", 5)
    started = time.monotonic()
    with write_transaction(), write_transaction(), writer_gate.held():
        db.execute_sql("DELETE FROM task WHERE 0")
    assert time.monotonic() - started < 2  # taken twice, it would wait for itself until the timeout


@sqlite_only
def test_a_forked_child_waits_for_the_gate_its_parent_holds(app):
    # a child that kept the inherited descriptor would share the parent's lock and walk in
    read, write = os.pipe()
    with writer_gate.held():
        pid = os.fork()
        if pid == 0:  # the child: take the gate, say so, leave at once
            with writer_gate.held():
                os.write(write, b"entered")
            os._exit(0)
        assert not select.select([read], [], [], HOLD_SECONDS)[0]
    assert select.select([read], [], [], 10)[0] and os.read(read, 16) == b"entered"
    os.waitpid(pid, 0)


@sqlite_only
def test_a_writer_kept_out_for_the_busy_timeout_fails_as_sqlite_would(app, monkeypatch):
    monkeypatch.setattr(writer_gate, "timeout", HOLD_SECONDS)
    outcome = {}

    def other_writer():
        started = time.monotonic()
        try:
            with write_transaction():
                pass
        except OperationalError as error:
            outcome["error"], outcome["waited"] = str(error), time.monotonic() - started

    with writer_gate.held():
        thread = threading.Thread(target=other_writer)
        thread.start()
        thread.join(10)
    assert "database is locked" in outcome["error"] and HOLD_SECONDS <= outcome["waited"] < 5


@sqlite_only
def test_after_waiting_in_vain_for_another_process_the_gate_still_opens(app, monkeypatch):
    monkeypatch.setattr(writer_gate, "timeout", HOLD_SECONDS)
    other = os.open(f"{db.database}-writers", os.O_RDONLY)  # as another process holds it
    try:
        fcntl.flock(other, fcntl.LOCK_EX)
        with pytest.raises(OperationalError), writer_gate.held():
            pass
        fcntl.flock(other, fcntl.LOCK_UN)
        started = time.monotonic()
        with writer_gate.held():  # neither this process's thread lock nor the file is left held
            assert time.monotonic() - started < HOLD_SECONDS
    finally:
        os.close(other)


def queued_elsewhere(database: str | None = None) -> int:
    """Jobs in the queue as another connection sees them."""
    database = database or db.database
    if on_postgres():
        import psycopg

        with psycopg.connect(database) as other:
            return other.execute(f"SELECT COUNT(*) FROM {huey.storage.table_task}").fetchone()[0]
    with sqlite3.connect(database) as other:
        return other.execute("SELECT COUNT(*) FROM task").fetchone()[0]


def test_a_job_enqueued_in_a_transaction_commits_with_it(app):
    with write_transaction():
        prune_idempotency_records()
        assert queued_elsewhere() == 0  # not before the transaction commits
    assert queued_elsewhere() == 1 and huey.pending_count() == 1


def test_a_job_enqueued_in_a_transaction_that_fails_is_never_queued(app):
    with pytest.raises(RuntimeError), write_transaction():
        prune_idempotency_records()
        raise RuntimeError("the change that asked for the job failed")
    assert huey.pending_count() == 0


def test_a_job_enqueued_outside_a_transaction_is_queued_at_once(app):
    prune_idempotency_records()
    assert queued_elsewhere() == 1


IMPORT_IN_TRANSACTION = """
import sys
from shop import models
from shop.db import init_database, write_transaction
init_database(sys.argv[1], 1)
models.create_tables()
with write_transaction():
    import tasks  # builds huey, which checks (and may create) its tables
    from tasks.maintenance import prune_idempotency_records
    prune_idempotency_records()
"""


@pytest.mark.parametrize("fresh", [False, True], ids=["existing-queue-tables", "new-database"])
def test_building_the_queue_inside_a_transaction_does_not_wait_on_itself(app, tmp_path, fresh):
    # a command's transaction that emits an event is often what first imports `tasks`
    if fresh and on_postgres():
        pytest.skip("a new SQLite file: on PostgreSQL the database is created by its administrator")
    path = str(tmp_path / "fresh.sqlite3") if fresh else db.database
    env = {**os.environ, "SHOP_DATABASE": path, "SHOP_DB_BUSY_TIMEOUT_SECONDS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_IN_TRANSACTION, path],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert queued_elsewhere(path) == 1


@sqlite_only
def test_threads_arriving_together_open_the_lock_file_once(app, monkeypatch):
    from shop import db as db_module

    gate, opened, real_open = db_module.WriterGate(), [], os.open

    def slow_open(*args, **kwargs):  # widen the window in which racing threads could all open it
        opened.append(args[0])
        time.sleep(0.01)
        return real_open(*args, **kwargs)

    monkeypatch.setattr(db_module.os, "open", slow_open)
    start = threading.Barrier(8)

    def write():
        start.wait(10)
        with gate.held():
            pass

    threads = [threading.Thread(target=write) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert opened == [f"{db.database}-writers"]

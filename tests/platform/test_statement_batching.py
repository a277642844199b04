"""shop.db's round-trip savers keep the meaning of the statements they batch, on both backends:
run_together answers each statement in order and stops at the first error; deferred() writes are
part of their transaction, their error is raised at the transaction's next statement or at its
COMMIT (and nothing of the transaction is kept), and a failed transaction leaves no warning of the
driver's in the log. On SQLite both run statement by statement; on PostgreSQL they pipeline."""

import logging

import pytest
from peewee import IntegrityError

from shop.db import (
    db,
    deferred,
    next_id_ahead,
    on_postgres,
    read_ahead,
    run_sql,
    run_together,
    write_transaction,
)
from shop.models import Appointment


@pytest.fixture
def scratch(app):
    """An empty table of this test's own (this thread's connection)."""
    with app.app_context():
        db.execute_sql("DROP TABLE IF EXISTS batching_scratch")
        db.execute_sql("CREATE TABLE batching_scratch (id INTEGER PRIMARY KEY, label TEXT)")
        yield
        db.execute_sql("DROP TABLE batching_scratch")


def ids() -> list[int]:
    return [row[0] for row in run_sql("SELECT id FROM batching_scratch ORDER BY id", {})]


def insert(n: int) -> None:
    run_sql("INSERT INTO batching_scratch (id, label) VALUES (:id, :label)", {"id": n, "label": f"row {n}"})


def test_run_together_answers_each_statement_in_order(scratch):
    with write_transaction():
        insert(1)
        insert(2)
        first, second, third = run_together(
            ("SELECT id FROM batching_scratch WHERE id = :id", {"id": 2}),
            ("UPDATE batching_scratch SET label = :label WHERE id = :id", {"id": 1, "label": "changed"}),
            ("SELECT label FROM batching_scratch ORDER BY id", {}),
        )
    assert first == [(2,)] and second == [] and third == [("changed",), ("row 2",)]


def test_run_together_stops_at_the_first_error_and_the_transaction_keeps_nothing(scratch):
    insert(1)
    with pytest.raises(IntegrityError), write_transaction():
        insert(2)
        run_together(
            ("INSERT INTO batching_scratch (id) VALUES (:id)", {"id": 1}),  # a duplicate
            ("INSERT INTO batching_scratch (id) VALUES (:id)", {"id": 3}),
        )
    assert ids() == [1]


def test_deferred_writes_commit_with_their_transaction(scratch):
    with write_transaction():
        insert(1)
        with deferred():
            insert(2)
            insert(3)
        assert ids() == [1, 2, 3]  # a read after them sees them (it brings their answers)
    assert ids() == [1, 2, 3]


def test_a_failed_deferred_write_fails_the_commit_and_nothing_is_kept(scratch, caplog):
    insert(1)
    with caplog.at_level(logging.WARNING), pytest.raises(IntegrityError), write_transaction():
        insert(2)
        with deferred():
            insert(1)  # a duplicate: its error comes back with the COMMIT
    assert ids() == [1]
    assert not [r for r in caplog.records if r.name.startswith("psycopg")], caplog.text


def test_a_connection_stays_usable_after_a_failed_pipeline_whatever_it_had_prepared(scratch):
    """The driver prepares a statement once it has run a few times, naming it as it sends it; a
    COMMIT that came to that count in a failed pipeline was never parsed by the server, and every
    later COMMIT on the connection failed ("prepared statement ... does not exist"). Fail at each
    count in turn, on a connection that has rolled back before (its first ROLLBACK would have
    reset the driver's record by chance)."""
    for before in range(0, 8):
        if on_postgres():
            db.drop_connection()  # a new connection: the driver's counts start again
        with write_transaction():
            run_sql("DELETE FROM batching_scratch", {})
        with pytest.raises(RuntimeError), write_transaction():
            ids()
            raise RuntimeError("rolled back")
        for n in range(1, before + 1):
            with write_transaction():
                insert(n)
        with pytest.raises(IntegrityError), write_transaction():
            insert(100)
            with deferred():
                insert(100)  # a duplicate: its error comes back with the COMMIT
        for n in range(before + 1, before + 9):
            with write_transaction():
                insert(n)
        assert ids() == list(range(1, before + 9)), before


def test_a_failed_deferred_write_fails_the_next_statement(scratch, caplog):
    insert(1)
    with caplog.at_level(logging.WARNING), pytest.raises(IntegrityError), write_transaction():
        with deferred():
            insert(1)
            insert(2)
        ids()
    assert ids() == [1]
    assert not [r for r in caplog.records if r.name.startswith("psycopg")], caplog.text


def test_a_block_that_fails_after_deferred_writes_keeps_none_of_them(scratch, caplog):
    with caplog.at_level(logging.WARNING), pytest.raises(RuntimeError), write_transaction():
        with deferred():
            insert(1)
            insert(2)
        raise RuntimeError("the caller gave up")
    assert ids() == []
    assert not [r for r in caplog.records if r.name.startswith("psycopg")], caplog.text
    with write_transaction():  # the connection is usable again
        insert(5)
    assert ids() == [5]


def test_a_read_ahead_gives_its_rows_when_asked(scratch):
    insert(1)
    with write_transaction():
        rows = read_ahead("SELECT id, label FROM batching_scratch WHERE id = :id", {"id": 1})
        nothing_yet = read_ahead("SELECT id FROM batching_scratch WHERE id = :id", {"id": 9})
        assert run_together(("SELECT 2", {})) == [[(2,)]]
        assert rows() == [(1, "row 1")] and nothing_yet() == []
        assert rows() == [(1, "row 1")]  # asked again: the same rows


def test_a_read_ahead_with_no_statement_after_it_is_answered_when_asked(scratch):
    insert(1)
    with write_transaction():
        rows = read_ahead("SELECT id FROM batching_scratch", {})
        assert rows() == [(1,)]
        insert(2)
    assert ids() == [1, 2]


@pytest.mark.postgres_only
def test_reads_ahead_travel_with_the_next_round_trip_on_postgres(scratch):
    from tests.helpers.round_trips import counted_round_trips

    insert(1)
    with counted_round_trips() as trips:
        with write_transaction():
            rows = read_ahead("SELECT id FROM batching_scratch", {})
            new_id = next_id_ahead(Appointment)
            run_together(("SELECT 2", {}), ("SELECT 3", {}))  # BEGIN, both reads ahead, these two
            assert rows() == [(1,)] and new_id() > 0
            with deferred():
                insert(2)  # goes with the COMMIT
    assert trips.count == 2, trips.trace
    assert ids() == [1, 2]


def test_no_id_is_read_ahead_on_sqlite(app):
    if not on_postgres():
        assert next_id_ahead(Appointment) is None

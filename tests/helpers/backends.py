"""The suite's two passes: which backends run, a throwaway PostgreSQL database, and each pass's count."""

import functools
import os
import uuid
from collections import Counter

import pytest
from peewee import AutoField

from shop.db import db, on_postgres
from shop.models import Event

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"
BACKENDS = ("sqlite", "postgres")


def selected() -> list[str]:
    """The backends of this run: SHOP_TEST_BACKENDS (a comma list), by default both."""
    names = [name.strip() for name in os.environ.get("SHOP_TEST_BACKENDS", ",".join(BACKENDS)).split(",")]
    unknown = set(names) - set(BACKENDS)
    if unknown:
        raise pytest.UsageError(f"SHOP_TEST_BACKENDS: unknown backend(s) {sorted(unknown)}")
    return [name for name in BACKENDS if name in names]


def server_url() -> str:
    """The PostgreSQL server the suite may use (it creates and drops its own databases there)."""
    return os.environ.get("SHOP_TEST_POSTGRES_URL") or DEFAULT_POSTGRES_URL


def _connect_admin():
    """An autocommit connection to the test server, or why there is none."""
    try:
        import psycopg
    except ImportError:
        return None, "psycopg is not installed (pip install '.[postgres]')"
    try:
        return psycopg.connect(server_url(), autocommit=True, connect_timeout=3), None
    except psycopg.Error as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return None, f"no server at {server_url()} ({first_line})"


def _admin_connection():
    """An autocommit connection to the server, or a skip of the PostgreSQL pass saying why."""
    conn, why = _connect_admin()
    if conn is None:
        pytest.skip(f"PostgreSQL pass skipped: {why}")
    return conn


def throwaway_postgres_database(request) -> str:
    """Create a database for this run on the test server; it is dropped when the pass ends."""
    admin = _admin_connection()
    name = f"shop_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin.execute(f'CREATE DATABASE "{name}"')
    admin.close()

    def drop():
        db.close()
        with _admin_connection() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    request.addfinalizer(drop)
    base = server_url().rsplit("/", 1)[0]
    return f"{base}/{name}"


def empty_tables(models) -> None:
    """Delete every row; on PostgreSQL also restart the id sequences, as SQLite reuses ids of an
    emptied table, so both passes assign the same ids.

    PostgreSQL: DELETE (a TRUNCATE of every table took 120 ms, on every test of the pass), but the
    event table, when it holds rows, is truncated: a truncated table starts a new file, so its rows'
    physical order is their insertion order again (tests/helpers/records.py `events` relies on it)."""
    with db.atomic():
        for model in reversed(models):
            if on_postgres() and model is Event:
                if Event.select().exists():
                    db.execute_sql('TRUNCATE "event" CASCADE')
                continue
            model.delete().execute()
        if on_postgres():
            db.execute_sql(
                "SELECT setval(s, 1, false) FROM unnest(%s::text[]) AS s", (_sequences(tuple(models)),)
            )


@functools.cache
def _sequences(models: tuple) -> list[str]:
    """The id sequences of the models' auto-increment keys."""
    serial = [m for m in models if isinstance(m._meta.primary_key, AutoField)]
    rows = db.execute_sql(
        "SELECT pg_get_serial_sequence(t, c) FROM unnest(%s::text[], %s::text[]) AS x(t, c)",
        ([m._meta.table_name for m in serial], [m._meta.primary_key.column_name for m in serial]),
    ).fetchall()
    return [row[0] for row in rows if row[0]]


def database_dump() -> str:
    """Every row of every table as text: SQLite's iterdump, or each PostgreSQL row cast to text."""
    if not on_postgres():
        return "\n".join(db.connection().iterdump())
    tables = [
        row[0]
        for row in db.execute_sql(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
    ]
    return "\n".join(
        row[0] for table in tables for row in db.execute_sql(f'SELECT t::text FROM "{table}" AS t').fetchall()
    )


def backend_of(item) -> str | None:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("app") if callspec is not None else None


@pytest.hookimpl(tryfirst=True)
def note_backends(config, items) -> None:
    """pytest_collection_modifyitems: tag each test with its backend (in its reports, which reach
    pytest-xdist's controller, for the summary), group it with its module's tests of the same
    backend (pytest-xdist's loadgroup: a worker opens each backend's database once, not per test),
    and leave out the PostgreSQL pass (said once in the summary) when no server answers."""
    for item in items:
        backend = backend_of(item)
        if backend is not None:
            item.user_properties.append(("backend", backend))
            item.add_marker(pytest.mark.xdist_group(f"{backend}:{item.module.__name__}"))
    if any(backend_of(item) == "postgres" for item in items) and _why_no_postgres() is not None:
        left_out = [item for item in items if backend_of(item) == "postgres"]
        items[:] = [item for item in items if backend_of(item) != "postgres"]
        config.hook.pytest_deselected(items=left_out)


def _why_no_postgres() -> str | None:
    conn, why = _connect_admin()
    if conn is not None:
        conn.close()
    return why


def summarize(terminalreporter) -> None:
    """pytest_terminal_summary: one line per backend pass with its outcomes."""
    counts: dict[str, Counter] = {}
    for outcome in ("passed", "failed", "error", "skipped", "xfailed", "xpassed"):
        for report in terminalreporter.stats.get(outcome, []):
            backend = dict(getattr(report, "user_properties", ())).get("backend")
            if backend and (outcome != "error" or report.when != "teardown"):
                counts.setdefault(backend, Counter())[outcome] += 1
    lines = [
        f"{backend} pass: " + ", ".join(f"{n} {outcome}" for outcome, n in counts[backend].items() if n)
        for backend in BACKENDS
        if backend in counts
    ]
    if "postgres" in selected() and "postgres" not in counts and (why := _why_no_postgres()):
        lines.append(f"postgres pass skipped: {why}")
    if lines:
        terminalreporter.section("backend passes")
        for line in lines:
            terminalreporter.write_line(line)

"""`flask shop copy-to URL`: move a shop's database (SQLite, usually) into an empty PostgreSQL one.

Every table of the app and the queue's tables (pending and scheduled jobs included) are copied in
one transaction on the target, read from one snapshot of the source; the id sequences are moved
past the copied ids, and each table's count on the target is checked against the source's before
the commit. A target that holds any row is refused before anything is written to it.
"""

import re

from peewee import AutoField

from shop import migrations
from shop.config import is_postgres
from shop.db import db, on_postgres
from shop.models import ALL_MODELS
from shop.queue_storage import SharedPostgresStorage

BATCH_ROWS = 500
# the queue's tables on each backend, with their columns (Huey's SqliteStorage and PostgresStorage)
QUEUE_COLUMNS = {
    "task": ("id", "queue", "data", "priority"),
    "schedule": ("id", "queue", "data", "timestamp"),
    "kv": ("queue", "key", "value"),
    "counter": ("queue", "key", "value"),
}
SQLITE_QUEUE = {name: name for name in QUEUE_COLUMNS}
POSTGRES_QUEUE = {name: f"huey_{name}" for name in QUEUE_COLUMNS}


class CopyError(Exception):
    """The copy was refused or did not verify; nothing was written to the target."""


def redacted(url: str) -> str:
    """The URL without its password, for messages and the printed result."""
    return re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", url)


def open_target(url: str):
    """A connection of its own to the target database (the app's `db` stays on the source)."""
    if not is_postgres(url):
        raise CopyError("the target must be a PostgreSQL URL: postgresql://USER[:PASS]@HOST[:PORT]/DB")
    from playhouse.postgres_ext import Psycopg3Database  # psycopg is the `postgres` extra

    target = Psycopg3Database(url, connect_timeout=10)
    try:
        target.connect()
    except Exception as error:  # noqa: BLE001  (any driver error: the operator reads its first line)
        raise CopyError(f"cannot connect to {redacted(url)}: {str(error).strip().splitlines()[0]}") from None
    return target


def prepare_target(target) -> None:
    """Create an empty target at the current schema version, or check that it is at it and empty."""
    state = migrations.status(target, ALL_MODELS)
    if state.state == "empty" and not target.get_tables():
        migrations.create_current(target, ALL_MODELS)
    elif state.state != "current":
        raise CopyError(
            f"the target is not at schema version {state.head} ({state.state}, version "
            f"{state.version}): create it empty, or run init-db on it"
        )
    present = set(target.get_tables())
    holding = [table for table in target_tables() if table in present and _count(target, table)]
    if holding:
        raise CopyError(
            f"the target is not empty (rows in {', '.join(holding)}): copy-to only fills an empty database"
        )
    with target.atomic():  # the queue's tables, when missing (IF NOT EXISTS)
        for statement in SharedPostgresStorage("shop", target.database).ddl:
            target.execute_sql(statement)


def target_tables() -> list[str]:
    return [model._meta.table_name for model in ALL_MODELS] + list(POSTGRES_QUEUE.values())


def _count(database, table: str) -> int:
    return database.execute_sql(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]


def copy_model(model, target) -> int:
    """Copy every row of one model's table, converted by its fields as peewee reads and writes them."""
    fields = model._meta.sorted_fields
    rows = model.select(*fields).order_by(model._meta.primary_key).tuples().iterator()
    batch, copied = [], 0
    for row in rows:
        batch.append(row)
        if len(batch) == BATCH_ROWS:
            copied += _insert(model, fields, batch, target)
            batch = []
    if batch:
        copied += _insert(model, fields, batch, target)
    return copied


def _insert(model, fields, rows, target) -> int:
    model.insert_many(rows, fields=fields).as_rowcount().execute(target)
    return len(rows)


def copy_queue(target) -> dict:
    """Copy the queue's tables (jobs waiting, jobs scheduled, Huey's keys and counters) as stored."""
    source_names = POSTGRES_QUEUE if on_postgres() else SQLITE_QUEUE
    copied = {}
    for name, columns in QUEUE_COLUMNS.items():
        listed = ", ".join(columns)
        rows = db.execute_sql(f"SELECT {listed} FROM {source_names[name]}").fetchall()
        marks = ", ".join(["%s"] * len(columns))
        for start in range(0, len(rows), BATCH_ROWS):
            batch = [
                tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
                for row in rows[start : start + BATCH_ROWS]
            ]
            target.cursor().executemany(
                f"INSERT INTO {POSTGRES_QUEUE[name]} ({listed}) VALUES ({marks})", batch
            )
        copied[POSTGRES_QUEUE[name]] = len(rows)
    return copied


def source_counts() -> dict:
    """Each table's rows in the source, under the target's table names."""
    counts = {model._meta.table_name: model.select().count() for model in ALL_MODELS}
    source_names = POSTGRES_QUEUE if on_postgres() else SQLITE_QUEUE
    counts.update({POSTGRES_QUEUE[name]: _count(db, source_names[name]) for name in QUEUE_COLUMNS})
    return counts


def move_sequences(target) -> None:
    """Move each id sequence past the largest copied id, so the next insert gets a new one."""
    serials = [
        (model._meta.table_name, model._meta.primary_key.column_name)
        for model in ALL_MODELS
        if isinstance(model._meta.primary_key, AutoField)
    ]
    serials += [(POSTGRES_QUEUE[name], "id") for name in ("task", "schedule")]
    for table, column in serials:
        target.execute_sql(
            f'SELECT setval(pg_get_serial_sequence(%s, %s), MAX({column})) FROM "{table}" '
            f"HAVING MAX({column}) IS NOT NULL",
            (table, column),
        )


def copy_to(url: str) -> dict:
    """Copy the app's database into the empty PostgreSQL database at `url`; the verified counts."""
    target = open_target(url)
    if on_postgres() and db.database == target.database:
        raise CopyError("the target is the database the app runs on")
    try:
        prepare_target(target)
        with db.atomic(), target.atomic():  # one snapshot of the source, one transaction on the target
            if on_postgres():  # SQLite's read transaction is a snapshot; PostgreSQL's must be asked for
                db.execute_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            expected = source_counts()
            copied = {model._meta.table_name: copy_model(model, target) for model in ALL_MODELS}
            copied.update(copy_queue(target))
            move_sequences(target)
            found = {table: _count(target, table) for table in expected}
            if not expected == copied == found:
                raise CopyError(
                    f"the counts do not verify: source {expected}, copied {copied}, target {found}"
                )
    finally:
        target.close()
    return {"source": redacted(db.database), "target": redacted(url), "verified": True, "tables": found}

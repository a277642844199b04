"""Schema versions: the numbered scripts of this package and the runner that applies them in order.

A script is a module `NNNN_what_it_does.py` here with `up(migrator, db)`: `migrator` is
playhouse.migrate's SchemaMigrator for `db`, the peewee database being migrated (SQLite or
PostgreSQL), so a script runs unchanged on both. The runner records each version it applies in the
`schema_version` table of that database, one transaction per script, holding the database's write
lock (SQLite) or an advisory lock (PostgreSQL) so that two processes never apply one twice.

The states of a database:
- empty (none of the app's tables): created from the models and stamped at the current version;
- unversioned (the app's tables, no schema_version): a database of the release of 0ff0c57, which
  0001_baseline checks and records; the later scripts then apply;
- behind / current / ahead of the scripts this release ships.
The job queue's tables are not versioned here: the queue's storage creates them with its own
`IF NOT EXISTS` DDL; a script may still change them (it is given the database).
"""

import contextlib
import importlib
import pkgutil
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from peewee import CharField, DateTimeField, IntegerField, Model, PostgresqlDatabase, Proxy, SqliteDatabase
from playhouse.migrate import SchemaMigrator

VERSION_TABLE = "schema_version"
# `--app shop` runs from an installed package and from a checkout alike (`--app app` needs app.py)
MIGRATE_COMMAND = "flask --app shop shop migrate"
SCRIPT_NAME = re.compile(r"^(\d{4})_(\w+)$")
PG_LOCK_KEY = 0x73686F70  # pg_advisory_xact_lock's key for "this database's schema" ("shop" in ASCII)


class MigrationError(Exception):
    """A database the runner cannot bring to the current version; nothing of the failed step is kept."""


class SchemaOutOfDate(MigrationError):
    """The database is not at the version this release's code reads and writes."""


class SchemaVersion(Model):
    """One row per version applied (or stamped); the database's version is the highest."""

    version = IntegerField(primary_key=True)
    name = CharField(max_length=255)
    applied_at = DateTimeField()

    class Meta:
        table_name = VERSION_TABLE


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    up: Callable


@dataclass(frozen=True)
class Status:
    state: str  # empty, unversioned, behind, current or ahead
    version: int  # 0 when empty or unversioned
    head: int

    def problem(self) -> str | None:
        """Why the app must not serve this database, or None when it may."""
        if self.state in ("empty", "current"):
            return None
        if self.state == "ahead":
            return (
                f"the database is at schema version {self.version}, newer than this release knows "
                f"({self.head}): run the release that migrated it, or restore the backup taken "
                "before the upgrade"
            )
        found = (
            f"is at schema version {self.version}"
            if self.state == "behind"
            else "has no schema version (it was made by a release before schema versions)"
        )
        return (
            f"the database {found}; this release needs version {self.head}. Back it up, then run "
            f"`{MIGRATE_COMMAND}`"
        )


def available() -> list[Migration]:
    """The scripts of this package in version order; they must number 1, 2, 3... without a gap."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        match = SCRIPT_NAME.match(module.name)
        if match:
            script = importlib.import_module(f"{__name__}.{module.name}")
            found.append(Migration(int(match.group(1)), module.name, script.up))
    found.sort(key=lambda migration: migration.version)
    if [migration.version for migration in found] != list(range(1, len(found) + 1)):
        raise MigrationError(f"migration scripts are not numbered 1..n: {[m.name for m in found]}")
    return found


def head() -> int:
    """The version this release's models are at: its last script's."""
    return len(available())


def _unwrap(db):
    """The database behind a peewee proxy (shop.db.db may be one): the runner checks its kind."""
    return db.obj if isinstance(db, Proxy) else db


def applied_versions(db) -> set[int] | None:
    """The versions recorded in `db`, or None when it has no version table."""
    if not db.table_exists(VERSION_TABLE):
        return None
    with db.bind_ctx([SchemaVersion]):
        return {row.version for row in SchemaVersion.select(SchemaVersion.version)}


def status(db, models) -> Status:
    """Where `db` stands against this release's scripts; `models` are the app's (not the queue's)."""
    db = _unwrap(db)
    last = head()
    versions = applied_versions(db)
    if versions is None:
        app_tables = {model._meta.table_name for model in models}
        state = "unversioned" if app_tables & set(db.get_tables()) else "empty"
        return Status(state, 0, last)
    version = max(versions, default=0)
    state = "ahead" if version > last else "current" if versions == set(range(1, last + 1)) else "behind"
    return Status(state, version, last)


@contextlib.contextmanager
def exclusive(db):
    """A transaction that holds the schema for itself: other writers (and migrators) wait for it.

    On SQLite, BEGIN IMMEDIATE takes the write lock up front, and foreign keys are off while it runs
    (a table rebuild must not cascade; the pragma only changes outside a transaction) and checked
    before commit. On PostgreSQL an advisory lock serialises migrators; DDL is transactional.
    """
    db = _unwrap(db)
    sqlite = isinstance(db, SqliteDatabase)
    foreign_keys = sqlite and bool(db.pragma("foreign_keys"))
    if foreign_keys:
        db.pragma("foreign_keys", 0)
    try:
        with db.atomic(**({"lock_type": "IMMEDIATE"} if sqlite else {})):
            if isinstance(db, PostgresqlDatabase):
                db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (PG_LOCK_KEY,))
            yield
            if sqlite and db.execute_sql("PRAGMA foreign_key_check").fetchall():
                raise MigrationError("the migration left rows whose foreign keys point nowhere")
    finally:
        if foreign_keys:
            db.pragma("foreign_keys", 1)


def _record(db, migration: Migration) -> None:
    with db.bind_ctx([SchemaVersion]):
        SchemaVersion.create(
            version=migration.version, name=migration.name, applied_at=datetime.now(UTC).replace(tzinfo=None)
        )


def create_current(db, models) -> bool:
    """On an empty `db`: create the app's tables from the models, stamped at the current version.

    True when it did; False when `db` was not empty (another process may have just created it).
    """
    db = _unwrap(db)
    if status(db, models).state != "empty":  # the usual start: no lock taken
        return False
    with exclusive(db):
        if status(db, models).state != "empty":
            return False
        with db.bind_ctx([*models, SchemaVersion]):
            db.create_tables([*models, SchemaVersion])
        for migration in available():
            _record(db, migration)
    return True


def migrate(db, models, progress: Callable[[str], None] = lambda line: None) -> dict:
    """Bring `db` to the current version; what was applied, from which version to which.

    An empty database is created at the current version; every other one gets the scripts it lacks,
    each in its own transaction that also records it, so a failure keeps the versions before it.
    """
    db = _unwrap(db)
    before = status(db, models)
    if before.state == "ahead":
        raise MigrationError(before.problem())
    created = before.state == "empty" and create_current(db, models)
    if created:
        progress(f"created the database at the current version ({before.head})")
    applied = []
    for migration in available():
        started = time.monotonic()
        with exclusive(db):
            versions = applied_versions(db)
            if versions is None:
                if migration.version != 1:  # the baseline is what creates the version table
                    raise MigrationError("the database has no schema_version table after the baseline")
                with db.bind_ctx([SchemaVersion]):
                    db.create_tables([SchemaVersion])
            elif migration.version in versions:
                continue  # applied before, or by another process meanwhile
            progress(f"applying {migration.name} ...")
            migration.up(SchemaMigrator.from_database(db), db)
            _record(db, migration)
        seconds = round(time.monotonic() - started, 3)
        progress(f"applied {migration.name} in {seconds} s")
        applied.append({"version": migration.version, "name": migration.name, "seconds": seconds})
    after = status(db, models)
    if not applied and not created:
        progress(f"nothing to apply: the database is at the current version ({after.version})")
    return {
        "from_version": before.version,
        "to_version": after.version,
        "created": created,
        "applied": applied,
    }

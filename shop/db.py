"""The peewee database: one SQLite file in WAL mode, a connection kept open per thread."""

from peewee import SqliteDatabase

db = SqliteDatabase(None)


def pragmas(busy_timeout_seconds: float) -> dict:
    """Pragmas for every connection: WAL, a busy timeout, foreign keys, NORMAL sync."""
    return {
        "journal_mode": "wal",
        "busy_timeout": int(busy_timeout_seconds * 1000),
        "foreign_keys": 1,
        "synchronous": "normal",
    }


def init_database(path: str, busy_timeout_seconds: float = 10) -> None:
    """Point the shared database object at a file (the app and the consumer both call this)."""
    if db.database == path:
        return
    if not db.is_closed():
        db.close()
    db.init(path, pragmas=pragmas(busy_timeout_seconds), timeout=busy_timeout_seconds,
            returning_clause=True)


def write_transaction():
    """A transaction that takes the write lock at once (BEGIN IMMEDIATE).

    A deferred transaction that reads first and writes later can fail with SQLITE_BUSY
    without waiting when another writer committed meanwhile; taking the lock up front
    lets busy_timeout do its job. Nested calls become savepoints.
    """
    return db.atomic(lock_type="IMMEDIATE")


def named_sql(text: str) -> str:
    """A hot-path statement with :name parameters, in the driver's parameter style.

    The request pipeline runs a few statements on every request; as constant text they are
    prepared once by the driver instead of being rebuilt by the query builder each time.
    """
    if db.param == "?":  # sqlite3 takes :name with a dict
        return text
    import re

    return re.sub(r":([a-z_]+)", r"%(\1)s", text)  # psycopg's pyformat


def run_sql(text: str, params: dict) -> list:
    """Run a constant hot-path statement and return all its rows."""
    return db.execute_sql(text, params).fetchall()

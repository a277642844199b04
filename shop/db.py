"""The peewee database: one SQLite file in WAL mode, a connection kept open per thread."""

import contextlib
import fcntl
import os
import threading

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


class WriterGate:
    """Writers of one database file queue here before they ask SQLite for its write lock.

    SQLite makes a writer that finds the lock taken sleep and poll (1 ms, 2 ms, 5 ms, ...), so
    under steady writes from the app and the consumer most of a collision is spent asleep after
    the lock was already free. Each thread holds its own descriptor of a lock file and takes it
    with flock, which wakes the next writer the moment the last one lets go. Writers that do not
    pass here (the sqlite3 shell, a script) still meet SQLite's own lock and busy timeout.
    """

    def __init__(self):
        self._local = threading.local()

    @contextlib.contextmanager
    def held(self):
        local = self._local
        depth = getattr(local, "depth", 0)
        fd = self._fd() if depth == 0 else None
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        local.depth = depth + 1
        try:
            yield
        finally:
            local.depth = depth
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def _fd(self) -> int | None:
        """This thread's descriptor of the lock file beside the database (None for no file)."""
        path, local = db.database, self._local
        if not path or path == ":memory:":
            return None
        if getattr(local, "file", None) is None or local.file.key != (os.getpid(), path):
            local.file = _LockFile(path)  # also in a forked child, whose inherited one is shared
        return local.file.fd


class _LockFile:
    """An open descriptor of the gate's lock file, closed with the thread that opened it."""

    def __init__(self, path: str):
        self.key = (os.getpid(), path)
        self.fd = os.open(f"{path}-writers", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def __del__(self):
        os.close(self.fd)


writer_gate = WriterGate()


@contextlib.contextmanager
def write_transaction():
    """A transaction that takes the write lock at once (BEGIN IMMEDIATE), after the writer gate.

    A deferred transaction that reads first and writes later can fail with SQLITE_BUSY
    without waiting when another writer committed meanwhile; taking the lock up front
    lets busy_timeout do its job. Nested calls become savepoints.
    """
    with writer_gate.held(), db.atomic(lock_type="IMMEDIATE") as transaction:
        yield transaction


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


def write_sql(text: str, params: dict) -> list:
    """run_sql for a statement that writes on its own (no transaction around it): through the gate."""
    with writer_gate.held():
        return db.execute_sql(text, params).fetchall()

"""The peewee database: one SQLite file in WAL mode, a connection kept open per thread."""

import contextlib
import fcntl
import os
import threading
import time

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
    writer_gate.timeout = busy_timeout_seconds


class WriterGate:
    """Writers of one database file queue here before they ask SQLite for its write lock.

    SQLite makes a writer that finds the lock taken sleep and poll (1 ms, 2 ms, 5 ms, 10 ms, ...),
    so under steady writes from the app and the consumer most of a collision is spent asleep after
    the lock was already free. Here the threads of a process queue on a lock that hands over at
    once, and processes on a lock file (flock) retried within a millisecond. After the busy
    timeout a writer stops waiting for the gate and lets SQLite's own lock and timeout decide, so
    a stuck writer fails the others as it always did instead of stalling them for ever. Writers
    that do not pass here (the sqlite3 shell, a script) meet SQLite's lock as before.
    """

    FIRST_PAUSE, LONGEST_PAUSE = 0.00005, 0.001

    def __init__(self):
        self.timeout = 10.0  # init_database sets the busy timeout
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        """A new process starts outside the gate, with a free thread lock and its own lock file."""
        self._depth = threading.local()
        self._threads = threading.Lock()
        self._file: tuple[str, int] | None = None

    @contextlib.contextmanager
    def held(self):
        depth = getattr(self._depth, "value", 0)
        taken = depth == 0 and self._enter()
        self._depth.value = depth + 1
        try:
            yield
        finally:
            self._depth.value = depth
            if taken:
                fcntl.flock(self._file[1], fcntl.LOCK_UN)
                self._threads.release()

    def _enter(self) -> bool:
        path = db.database
        if not path or path == ":memory:":
            return False
        deadline = time.monotonic() + self.timeout
        if not self._threads.acquire(timeout=self.timeout):
            return False
        fd, pause = self._fd(path), self.FIRST_PAUSE
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    self._threads.release()
                    return False
                time.sleep(pause)
                pause = min(pause * 2, self.LONGEST_PAUSE)

    def _fd(self, path: str) -> int:
        """This process's descriptor of the lock file beside the database."""
        if self._file is None or self._file[0] != path:
            if self._file is not None:
                os.close(self._file[1])
            self._file = (path, os.open(f"{path}-writers", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))
        return self._file[1]


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

"""The peewee database: one SQLite file in WAL mode or one PostgreSQL database, a connection per thread.

`db` is a proxy every model is bound to at import; `init_database()` points it at the configured
backend. The SQLite-only machinery (the writer gate, BEGIN IMMEDIATE) is used only on SQLite.
"""

import contextlib
import fcntl
import functools
import logging
import os
import re
import sqlite3
import threading
import time

from peewee import DatabaseProxy, OperationalError, PostgresqlDatabase, SqliteDatabase

from shop.config import is_postgres


class ShopSqliteDatabase(SqliteDatabase):
    """SqliteDatabase that leaves a transaction SQLite already rolled back on its own.

    On some errors (a full disk, an I/O error, out of memory) SQLite rolls the whole transaction
    back itself; peewee's ROLLBACK (or ROLLBACK TO SAVEPOINT) then fails with "no transaction is
    active" and that error replaced the one that said why (a 500 instead of the 503 of a full
    disk). Here there is nothing to roll back, and the original error goes on.
    """

    def _rolled_back_already(self) -> bool:
        conn = self._state.conn
        return conn is not None and not self._state.closed and not conn.in_transaction

    def rollback(self):
        if self._rolled_back_already():
            return None
        return super().rollback()

    def execute_sql(self, sql, params=None):
        if sql.startswith("ROLLBACK TO SAVEPOINT") and self._rolled_back_already():
            return None  # peewee's savepoint rollback: the transaction is gone already
        return super().execute_sql(sql, params)


_sqlite = ShopSqliteDatabase(None)
db = DatabaseProxy()
db.initialize(_sqlite)  # nothing opened: a file or a URL is named by init_database()
log = logging.getLogger("shop.db")


# a connection checkpoints by itself only when the background checkpointer fell this far behind
SAFETY_NET_PAGES = 10000


def pragmas(busy_timeout_seconds: float) -> dict:
    """Pragmas for every connection: WAL, a busy timeout, foreign keys, NORMAL sync."""
    return {
        "journal_mode": "wal",
        "busy_timeout": int(busy_timeout_seconds * 1000),
        "foreign_keys": 1,
        "synchronous": "normal",
        "wal_autocheckpoint": SAFETY_NET_PAGES,
    }


SYNCHRONOUS_COMMIT = ("off", "local", "remote_write", "remote_apply", "on")


def postgres_options(busy_timeout_seconds: float, synchronous_commit: str = "on") -> str:
    """The settings of every PostgreSQL connection of the app and the queue (libpq `options`)."""
    if synchronous_commit not in SYNCHRONOUS_COMMIT:
        raise ValueError(
            f"SHOP_DB_SYNCHRONOUS_COMMIT must be one of {', '.join(SYNCHRONOUS_COMMIT)}, "
            f"not {synchronous_commit!r}"
        )
    # a statement that waits longer than the busy timeout on a lock fails as SQLite's would; a commit
    # waits for its WAL flush unless the operator chose otherwise (docs/decisions.md)
    return f"-c lock_timeout={int(busy_timeout_seconds * 1000)} -c synchronous_commit={synchronous_commit}"


def init_database(target: str, busy_timeout_seconds: float = 10, synchronous_commit: str = "on") -> None:
    """Point the shared database at a SQLite file or a PostgreSQL URL (the app and the consumer call this)."""
    checkpointer.watch(target)  # a SQLite file's WAL; a URL is left alone
    if db.database == target:
        return
    if not db.is_closed():
        db.close()
    if is_postgres(target):
        from shop.postgres import ShopPostgresDatabase  # psycopg is the `postgres` extra

        options = postgres_options(busy_timeout_seconds, synchronous_commit)
        db.initialize(ShopPostgresDatabase(target, options=options, connect_timeout=10))
    else:
        create_private_file(target)
        _sqlite.init(
            target, pragmas=pragmas(busy_timeout_seconds), timeout=busy_timeout_seconds, returning_clause=True
        )
        db.initialize(_sqlite)
    writer_gate.timeout = busy_timeout_seconds


# seconds a client is asked to wait before retrying a request the database could not take (503)
RETRY_AFTER_SECONDS = 2

# SQLite's primary result codes of a database that cannot take the statement now: busy, locked,
# an I/O error, full, cannot open (a missing folder, too many files)
_SQLITE_UNAVAILABLE = {5, 6, 10, 13, 14}
_SQLITE_UNAVAILABLE_TEXT = (
    "database is locked",
    "database or disk is full",
    "disk i/o error",
    "unable to open",
)
# PostgreSQL's SQLSTATE classes and codes of a server that cannot be reached or cannot take it now:
# 08 connection exception, 53 insufficient resources (too many connections, disk full), 57 operator
# intervention (admin shutdown, crash shutdown, cannot connect now), 55P03 lock not available (a
# statement that waited lock_timeout, SQLite's busy timeout)
_POSTGRES_UNAVAILABLE_CLASSES = ("08", "53", "57")
_POSTGRES_UNAVAILABLE_CODES = ("55P03",)


def _driver_error(error: BaseException) -> BaseException | None:
    """The driver's exception behind a peewee one (peewee wraps it as its first argument)."""
    seen = 0
    while error is not None and seen < 5:
        module = type(error).__module__ or ""
        if module.startswith(("psycopg", "sqlite3")):
            return error
        inner = error.args[0] if error.args and isinstance(error.args[0], BaseException) else None
        error = inner or error.__cause__ or error.__context__
        seen += 1
    return None


def unavailable(error: BaseException) -> bool:
    """Whether a database error says the database could not be reached or could not take the
    statement now (the request is answered 503 with Retry-After, never 500): a lost or refused
    connection, a server shutting down or starting, a lock waited on past the busy timeout, a full
    disk. A mistake in a statement (a syntax error, a missing table) is not one."""
    import peewee

    ours = isinstance(error, (peewee.DatabaseError, peewee.InterfaceError))
    if not ours and _driver_error(error) is not error:
        return False  # neither peewee's nor the driver's (a driver error may escape peewee: fetchall)
    driver = _driver_error(error)
    text = str(error).lower()
    if driver is None:  # raised by peewee or by this module (the writer gate)
        return "database is locked" in text or "connection" in text
    if isinstance(driver, sqlite3.Error):
        code = getattr(driver, "sqlite_errorcode", None)
        if code is not None:
            return code & 0xFF in _SQLITE_UNAVAILABLE
        return any(part in str(driver).lower() for part in _SQLITE_UNAVAILABLE_TEXT)
    import psycopg

    if not isinstance(driver, psycopg.Error):
        return False
    state = driver.sqlstate
    if state is None:  # raised by the client: the connection is closed, lost or could not be made
        return isinstance(driver, (psycopg.OperationalError, psycopg.InterfaceError))
    return state[:2] in _POSTGRES_UNAVAILABLE_CLASSES or state in _POSTGRES_UNAVAILABLE_CODES


def create_private_file(path: str) -> None:
    """Create a SQLite file the owner alone may read (0600, whatever the umask), where none is yet;
    SQLite gives its -wal and -shm files the database file's permissions."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return
    except OSError:
        return  # a folder that is not there or not writable: SQLite's own error says it better
    os.chmod(path, 0o600)


def on_postgres() -> bool:
    """Whether the shared database is PostgreSQL (else SQLite)."""
    return isinstance(db.obj, PostgresqlDatabase)


def backend() -> str:
    """ "postgres" or "sqlite": the key of a statement written once per backend."""
    return "postgres" if on_postgres() else "sqlite"


class WriterGate:
    """Writers of one database file queue here before they ask SQLite for its write lock.

    SQLite makes a writer that finds the lock taken sleep and poll (1 ms, 2 ms, 5 ms, 10 ms, ...),
    so under steady writes from the app and the consumer most of a collision is spent asleep after
    the lock was already free. Here the threads of a process queue on a lock that hands over at
    once, and processes on a lock file (flock) retried within a millisecond. A writer that waited
    the busy timeout fails with "database is locked", as SQLite would have made it. Writers that
    do not pass here (the sqlite3 shell, a script) meet SQLite's own lock as before; a lock file
    that cannot be opened leaves every writer to that lock too.
    """

    FIRST_PAUSE, LONGEST_PAUSE = 0.00005, 0.001

    def __init__(self):
        self.timeout = 10.0  # init_database sets the busy timeout
        self._file: tuple[str, int] | None = None
        self._reset()
        os.register_at_fork(after_in_child=self._after_fork)

    def _reset(self) -> None:
        """Start outside the gate, with a free thread lock and no lock file open."""
        self._depth = threading.local()
        self._threads = threading.Lock()
        self._file = None

    def _after_fork(self) -> None:
        """A child shares the parent's descriptor (and so its flock): it opens its own."""
        self._close()  # the parent's descriptor stays open, and its lock held
        self._reset()

    def _close(self) -> None:
        if self._file is not None and self._file[1] is not None:
            os.close(self._file[1])
        self._file = None

    @contextlib.contextmanager
    def held(self):
        depth = getattr(self._depth, "value", 0)
        fd = self._enter() if depth == 0 else None
        self._depth.value = depth + 1
        try:
            yield
        finally:
            self._depth.value = depth
            if fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                finally:
                    self._threads.release()

    def _enter(self) -> int | None:
        """Take the gate; the descriptor to let go of, or None when there is no gate to take."""
        fd = self._fd()
        if fd is None:
            return None
        deadline = time.monotonic() + self.timeout
        if not self._threads.acquire(timeout=self.timeout):
            raise OperationalError("database is locked (waited for the writers of this process)")
        try:
            pause = self.FIRST_PAUSE
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return fd
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise OperationalError(
                            "database is locked (waited for the writers of other processes)"
                        ) from None
                    time.sleep(pause)
                    pause = min(pause * 2, self.LONGEST_PAUSE)
        except BaseException:
            self._threads.release()
            raise

    def _fd(self) -> int | None:
        """This process's descriptor of the lock file beside the database (opened once)."""
        path = db.database
        if not path or path == ":memory:" or on_postgres():  # PostgreSQL has no single writer to queue for
            return None
        if self._file is None or self._file[0] != path:
            with self._threads:
                if self._file is not None and self._file[0] == path:  # another thread just opened it
                    return self._file[1]
                self._close()
                try:  # flock needs no write access: readable is enough; created as umask allows
                    self._file = (
                        path,
                        os.open(f"{path}-writers", os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o666),
                    )
                except OSError as error:
                    log.warning("writer gate off: cannot open %s-writers (%s)", path, error.strerror)
                    self._file = (path, None)
        return self._file[1]


writer_gate = WriterGate()


class Checkpointer:
    """Copies the WAL into the database file from a background thread (a PASSIVE checkpoint).

    SQLite otherwise checkpoints inside the commit that crosses `wal_autocheckpoint` pages, fsync
    included, while that writer holds the write lock: measured under the webhook bench, 1 % of the
    commits took 10 to 100 ms, a third of all commit time, and every other writer of every process
    waited behind them (docs/performance.md, Webhooks). A passive checkpoint takes no write lock,
    so here it runs beside the writers; connections still checkpoint themselves past
    SAFETY_NET_PAGES, should this thread fall behind. One thread per process, on the SQLite file
    the shared database points at (none on PostgreSQL); an idle WAL costs a read every INTERVAL.
    """

    INTERVAL = 0.05

    def __init__(self):
        self._started = False
        self._thread: threading.Thread | None = None
        self._mutex = threading.Lock()
        os.register_at_fork(after_in_child=self._after_fork)

    def watch(self, path: str) -> None:
        """Start the thread once per process, when a SQLite file is first opened."""
        if not path or path == ":memory:" or "://" in path:
            return
        with self._mutex:
            self._started = True
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="wal-checkpointer", daemon=True)
                self._thread.start()

    def _after_fork(self) -> None:
        """A forked child (a web worker) has no thread: start its own."""
        self._mutex, self._thread = threading.Lock(), None
        if self._started:
            self.watch(_sqlite.database or "")

    def _run(self) -> None:
        conn, opened = None, None
        while True:
            time.sleep(self.INTERVAL)
            path = _sqlite.database if db.obj is _sqlite else None
            if not path or path == ":memory:":
                continue
            try:
                key = (path, os.stat(path).st_ino)  # a replaced file gets a new connection
                if key != opened:
                    if conn is not None:
                        conn.close()
                    conn = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
                    conn.execute("PRAGMA synchronous=NORMAL")
                    opened = key
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except (OSError, sqlite3.Error):
                opened = None  # gone, moved or busy: look again next time


checkpointer = Checkpointer()


@contextlib.contextmanager
def write_transaction():
    """A transaction that takes the write lock at once (BEGIN IMMEDIATE), after the writer gate.

    A deferred transaction that reads first and writes later can fail with SQLITE_BUSY
    without waiting when another writer committed meanwhile; taking the lock up front
    lets busy_timeout do its job. Nested calls become savepoints. On PostgreSQL a plain
    transaction: writers run side by side, and a rule that needs one writer at a time takes
    its own lock (`serialize()`, row locks, unique constraints: docs/decisions.md).
    """
    if on_postgres():
        with db.atomic() as transaction:
            yield transaction
        return
    with writer_gate.held(), db.atomic(lock_type="IMMEDIATE") as transaction:
        yield transaction


def serialize(*names) -> None:
    """Inside a write transaction: wait until no other transaction holds the lock named by `names`.

    On SQLite the write transaction already excludes every other writer; on PostgreSQL this takes
    a transaction-scoped advisory lock, so a rule checked and then written (slot capacity, the
    send rate) holds across processes and machines. Released at commit or rollback.
    """
    if on_postgres():
        db.execute_sql("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (lock_name(*names),))


def lock_name(*names) -> str:
    """The text an advisory lock of serialize() is named by (hashed into the lock's key)."""
    return ":".join(str(name) for name in names)


def locked(query, strength: str = "UPDATE"):
    """A select whose rows stay locked until the transaction ends (SELECT ... FOR UPDATE) on
    PostgreSQL, so a read-check-write on them cannot interleave with another one; on SQLite the
    write transaction already holds every row.

    `strength` "NO KEY UPDATE" locks a row that other rows refer to without making their inserts
    wait (a foreign key check takes a key-share lock, which only FOR UPDATE excludes)."""
    return query.for_update(f"FOR {strength}") if on_postgres() else query


def named_sql(text: str) -> str:
    """A hot-path statement with :name parameters; run it with run_sql / write_sql / driver_sql.

    The request pipeline runs a few statements on every request; as constant text they are
    prepared once by the driver instead of being rebuilt by the query builder each time. The
    text keeps :name (sqlite3's style) and is put in the driver's style when it runs, since the
    backend is chosen after these constants are built at import.
    """
    return text


def driver_sql(text: str) -> str:
    """A named_sql statement in the parameter style of the database in use."""
    return text if db.param == "?" else _pyformat(text)


@functools.lru_cache(maxsize=512)
def _pyformat(text: str) -> str:
    # psycopg's pyformat: a literal % doubles, :name becomes %(name)s (a cast such as ::int stays)
    return re.sub(r"(?<![:\w]):([a-z_]+)", r"%(\1)s", text.replace("%", "%%"))


def run_sql(text: str, params: dict) -> list:
    """Run a constant hot-path statement and return all its rows ([] for a write without RETURNING)."""
    return rows_of(db.execute_sql(driver_sql(text), params))


def rows_of(cursor) -> list:
    """Every row a statement's cursor holds ([] for a statement that returns none)."""
    # psycopg builds a column object per column on every read of cursor.description (78 per
    # booking, a twentieth of its function calls): the result's field count says the same for free
    pgresult = getattr(cursor, "pgresult", None)
    if pgresult is not None:
        return cursor.fetchall() if pgresult.nfields else []
    return cursor.fetchall() if cursor.description else []


def run_together(*statements: tuple[str, dict]) -> list[list]:
    """run_sql for several statements in order, each one's rows: on PostgreSQL in one round trip.

    Each statement still starts once the one before has finished (a lock taken by one is held
    when the next reads); only the waiting for the answers is shared.
    """
    if not on_postgres():
        return [run_sql(text, params) for text, params in statements]
    cursors = db.obj.execute_together([(driver_sql(text), params) for text, params in statements])
    return [rows_of(cursor) for cursor in cursors]


def deferred():
    """Inside a write transaction, around writes whose results nobody reads: on PostgreSQL they go
    out without waiting and are answered with the transaction's next statement or its COMMIT (an
    error in one is raised there); on SQLite each runs as usual."""
    return db.obj.deferred_writes() if on_postgres() else contextlib.nullcontext()


def read_ahead(text: str, params: dict):
    """Inside a write transaction, a read whose rows it needs later: on PostgreSQL sent now without
    waiting, its answer brought by the transaction's next round trip (a statement, run_together or
    the wait for it); on SQLite run when its rows are first asked for. Returns a function giving
    the rows (the same ones each time).

    The read sees the database as of the moment it runs on the server, like any statement of the
    transaction (READ COMMITTED on PostgreSQL); on SQLite the write lock already holds it still.
    """
    if not on_postgres() or not db.in_transaction():
        return functools.cache(lambda: run_sql(text, params))
    with db.obj.deferred_writes():
        cursor = db.execute_sql(driver_sql(text), params)
    return functools.cache(lambda: rows_of(db.obj.answered(cursor)))


def next_id_ahead(model):
    """Inside a write transaction on PostgreSQL: the next id of the model's sequence, read ahead
    (read_ahead), so the row's insert need not wait for its RETURNING; None on SQLite, whose insert
    assigns it. A transaction that rolls back leaves a gap, as a failed insert already does."""
    if not on_postgres():
        return None
    table, column = model._meta.table_name, model._meta.primary_key.column_name
    rows = read_ahead(
        named_sql("SELECT nextval(pg_get_serial_sequence(:table, :column))"),
        {"table": table, "column": column},
    )
    return lambda: rows()[0][0]


def write_sql(text: str, params: dict) -> list:
    """run_sql for a statement that writes on its own (no transaction around it): through the gate."""
    with writer_gate.held():
        return run_sql(text, params)

"""Huey's storages, sharing the app's database: SQLite tuned for one file, PostgreSQL for many boxes."""

import contextlib
import threading
import time

from huey.constants import EmptyData
from huey.storage import PostgresStorage, SqliteStorage

from shop.db import SAFETY_NET_PAGES, named_sql, on_postgres, run_sql, writer_gate
from shop.db import db as app_db

# the next queued tasks, oldest first (the queue's own order), read through the app's connection
HEAD_SQL = named_sql(
    "SELECT id, data FROM {table} WHERE queue = :queue ORDER BY priority DESC, id LIMIT :limit"
)


class SharedFileSqliteStorage(SqliteStorage):
    """SqliteStorage with these changes, each measured in docs/performance.md:

    - synchronous=NORMAL like the app's connections (SqliteHuey runs FULL: an fsync per enqueue;
      in WAL mode NORMAL is still safe against corruption and loses at most the last commits on a
      power cut);
    - no checkpoint in a writer's commit below the app's safety net: the app's background
      checkpointer (shop.db.Checkpointer) copies the WAL, outside every writer's critical path;
    - a connection per thread instead of one connection behind one lock, so worker threads do not
      queue behind each other for reads;
    - pop_data looks before it takes the write lock: after every task Huey pops the task's revoke
      key, which almost never exists;
    - dequeue reads the next tasks without the write lock and takes one with a single DELETE
      (Huey selects and deletes inside one write transaction: four statements, each handing the
      GIL over, while every other writer waits; docs/performance.md, Webhooks);
    - a task enqueued inside one of the app's write transactions is written in that transaction:
      it commits with the rows it is about, or not at all, and costs no transaction of its own;
    - the schema is created only when missing (the app creates it with its own tables): setting
      the queue up inside a transaction must not wait for the lock it holds;
    - no file at construction: `use_file()` names it (shop.queue.setup), and a storage used before
      that calls `on_first_use` to set itself up, so importing the queue opens nothing.
    """

    OWN_OBJECTS = ("kv", "schedule", "task", "counter", "schedule_queue_timestamp", "task_queue_priority_id")

    begin_sql = "begin immediate"

    def __init__(self, *args, on_first_use=None, **kwargs):
        self._local = threading.local()
        self._on_first_use = on_first_use
        super().__init__(*args, filename=None, **kwargs)

    def use_file(self, path: str, busy_timeout: float) -> None:
        """Keep the queue in the database file at `path`, creating its tables there if missing."""
        if self.filename == path:
            return
        self.close()
        self.filename, self._timeout = path, busy_timeout
        self.initialize_schema()

    def _file(self) -> str:
        """The database file, set up on first use when nothing named it yet."""
        if self.filename is None and self._on_first_use is not None:
            self._on_first_use()
            if self.filename is None:  # the configured database is PostgreSQL: setup() swapped storages
                raise RuntimeError(
                    "the queue is on PostgreSQL: run the consumer with `flask shop worker` "
                    "or `python -m tasks`"
                )
        return self.filename

    def _create_connection(self):
        conn = super()._create_connection()
        conn.execute("pragma synchronous=1")
        # the app's background checkpointer copies the WAL; this connection only as a safety net
        conn.execute(f"pragma wal_autocheckpoint={SAFETY_NET_PAGES}")
        return conn

    @property
    def conn(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self._file()
            conn = self._local.conn = self._create_connection()
        return conn

    @contextlib.contextmanager
    def db(self, commit=False, close=False):
        if commit:
            with writer_gate.held(), self._cursor(commit, close) as cursor:
                yield cursor
        else:
            with self._cursor(commit, close) as cursor:
                yield cursor

    @contextlib.contextmanager
    def _cursor(self, commit, close):
        conn = self.conn
        cursor = conn.cursor()
        try:
            if commit:
                cursor.execute(self.begin_sql)
            yield cursor
        except Exception:
            if commit:
                conn.rollback()
            raise
        else:
            if commit:
                conn.commit()
        finally:
            cursor.close()
            if close:
                conn.close()
                self._local.conn = None

    def close(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            return False
        conn.close()
        self._local.conn = None
        return True

    def _in_app_transaction(self) -> bool:
        return app_db.in_transaction() and app_db.database == self._file()

    def initialize_schema(self):
        marks = ",".join("?" * len(self.OWN_OBJECTS))
        present = self.sql(
            f"SELECT COUNT(*) FROM sqlite_master WHERE name IN ({marks})", self.OWN_OBJECTS, results=True
        )[0][0]
        if present < len(self.OWN_OBJECTS):
            super().initialize_schema()

    def probe(self) -> None:
        """Read the task table (the health check): raises when the queue cannot be reached."""
        self.sql("select 1 from task limit 1", results=True)

    def enqueue(self, data, priority=None):
        if self._in_app_transaction():
            app_db.execute_sql(
                "INSERT INTO task (queue, data, priority) VALUES (?, ?, ?)",
                (self.name, self.to_blob(data), priority or 0),
            )
        else:
            super().enqueue(data, priority)

    DEQUEUE_LOOKAHEAD = 8  # candidates read at once: racing workers each find one still there

    def head(self, limit: int) -> list:
        """The next `limit` queued tasks as (row id, data), through the app's connection: a read."""
        return run_sql(*self.head_statement(limit))

    def head_statement(self, limit: int) -> tuple[str, dict]:
        """head()'s read as a named_sql statement and its parameters (to run with other statements)."""
        return HEAD_SQL.format(table="task"), {"queue": self.name, "limit": limit}

    def take(self, ids: list) -> None:
        """Delete these queued tasks in the app's current write transaction (their work is done there)."""
        if ids:
            marks = ",".join("?" * len(ids))
            app_db.execute_sql(f"DELETE FROM task WHERE queue = ? AND id IN ({marks})", (self.name, *ids))

    def dequeue(self):
        candidates = self.sql(
            "SELECT id, data FROM task WHERE queue = ? ORDER BY priority DESC, id LIMIT ?",
            (self.name, self.DEQUEUE_LOOKAHEAD),
            results=True,
        )
        for task_id, data in candidates:
            with writer_gate.held():  # one statement: SQLite's own transaction, no BEGIN or COMMIT
                taken = self.conn.execute("DELETE FROM task WHERE id = ?", (task_id,)).rowcount
            if taken == 1:  # else another worker took it since the read: try the next one
                return data
        return None

    def pop_data(self, key):
        if self.peek_data(key) is EmptyData:
            return EmptyData
        return super().pop_data(key)


def usable(conn) -> bool:
    """shop.postgres.usable (imported late: psycopg is the `postgres` extra)."""
    from shop.postgres import usable as idle_connection_usable

    return idle_connection_usable(conn)


def queue_ddl() -> list[str]:
    """The statements that create the queue's tables in the app's database, for its backend."""
    if on_postgres():
        return SharedPostgresStorage("shop", app_db.database).ddl  # opens nothing
    return SqliteStorage.ddl


class SharedPostgresStorage(PostgresStorage):
    """PostgresStorage (claims with FOR UPDATE SKIP LOCKED, wakes on LISTEN/NOTIFY) with these changes,
    each measured in docs/performance.md (SQLite and PostgreSQL on one box):

    - a task enqueued inside one of the app's transactions is written through the app's connection,
      so it commits with the rows it is about or not at all; its NOTIFY is sent at that commit (the
      insert and the notify are one statement);
    - a task costs one statement to take instead of three: the take also says whether the queue has
      any key at all (a revoke, a lock), and when it has none Huey's revoke read before the task is
      answered without a query; the revoke flag Huey clears after the task is then cleared by the
      same worker's next take (when a revoke arrived meanwhile);
    - a NOTIFY wakes one idle worker of the process, not all of them: the idle workers take turns on
      one LISTEN connection and a notification received is handed to one waiting worker (Huey gives
      every worker its own LISTEN, and each of them runs a take for every task enqueued);
    - the schema is created only by the app (init-db, create_app) with its own tables;
    - no connection at construction: `use_dsn()` names the database (shop.queue.setup).
    """

    def __init__(self, name, dsn: str, **kwargs):
        super().__init__(name, dsn=dsn, create_tables=False, **kwargs)
        self._worker = threading.local()  # per worker thread: what its last take said (see take())
        self._listener = None  # the LISTEN connection of this process, used by one idle worker at a time
        self._wakes = threading.Condition()
        self._listening = False  # whether an idle worker is waiting on the LISTEN connection
        self._pending_wakes = 0  # notifications received and not yet taken by a worker
        self.take_sql = (
            f"WITH cleared AS (DELETE FROM {self.table_kv} WHERE queue = %(queue)s AND key = %(clear)s), "
            f"taken AS (DELETE FROM {self.table_task} WHERE id = (SELECT id FROM {self.table_task} "
            "WHERE queue = %(queue)s ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED) "
            "RETURNING data) "
            f"SELECT data, EXISTS (SELECT 1 FROM {self.table_kv} WHERE queue = %(queue)s "
            "AND key IS DISTINCT FROM %(clear)s) FROM taken"
        )
        self.enqueue_sql = (
            f"WITH queued AS (INSERT INTO {self.table_task} (queue, data, priority) VALUES (%s, %s, %s) "
            "RETURNING id) SELECT pg_notify(%s, '') FROM queued"
        )

    @property
    def conn(self):
        # Huey drops a connection psycopg knows is closed or broken; one whose server hung up while
        # it was idle is dropped here too, before it is used (shop.postgres.usable)
        if self._conn is not None and not usable(self._conn):
            self._close_quiet(self._conn)
            self._conn = None
        return super().conn

    def probe(self) -> None:
        """Read the task table (the health check): raises when the queue cannot be reached."""
        self.sql(f"select 1 from {self.table_task} limit 1", results=True)

    def _in_app_transaction(self) -> bool:
        return on_postgres() and app_db.in_transaction() and app_db.database == self.dsn

    def head(self, limit: int) -> list:
        """The next `limit` queued tasks as (row id, data), through the app's connection: a read."""
        return run_sql(*self.head_statement(limit))

    def head_statement(self, limit: int) -> tuple[str, dict]:
        """head()'s read as a named_sql statement and its parameters (to run with other statements:
        a delivery job reads its delivery and the queue in one round trip)."""
        return HEAD_SQL.format(table=self.table_task), {"queue": self.name, "limit": limit}

    def take(self, ids: list) -> None:
        """Delete these queued tasks in the app's current transaction (their work is done there); a
        task another consumer is taking meanwhile is simply gone by the time this commits."""
        if ids:
            app_db.execute_sql(
                f"DELETE FROM {self.table_task} WHERE queue = %s AND id = ANY(%s)", (self.name, list(ids))
            )

    def enqueue(self, data, priority=None):
        if self._in_app_transaction():
            app_db.execute_sql(self.enqueue_sql, (self.name, data, priority or 0, self.channel))
        else:
            super().enqueue(data, priority)

    def close(self):
        listener, self._listener = self._listener, None
        if listener is not None:
            self._close_quiet(listener)
        return super().close()

    def _dequeue(self):
        """Take the next task in one statement, clearing the revoke flag left by this worker's last task."""
        worker = self._worker
        clear = getattr(worker, "clear", None)
        with self.db() as curs:
            curs.execute(self.take_sql, {"queue": self.name, "clear": clear})
            row = curs.fetchone()
        worker.clear, worker.ran = None, None
        worker.keyless = row is not None and not row[1]  # no revoke could apply to this task
        return bytes(row[0]) if row is not None else None

    def peek_many(self, keys):
        # right after a take that saw no key in the queue, this is Huey's revoke check of that task
        if getattr(self._worker, "keyless", False):
            self._worker.keyless, self._worker.ran = False, (keys[0] if keys else None)
            return {}
        return super().peek_many(keys)

    def delete_data(self, key):
        # Huey clearing the revoke flag of the task just run (a revoke sent while it ran): the next
        # take of this worker does it
        if key is not None and key == getattr(self._worker, "ran", None):
            self._worker.ran, self._worker.clear = None, self._key(key)
            return False
        return super().delete_data(key)

    def dequeue(self):
        data = self._dequeue()
        if data is not None or not self.blocking:
            return data
        deadline = time.monotonic() + self.read_timeout
        while self._wait_for_wake(deadline):
            data = self._dequeue()
            if data is not None:
                return data  # else another worker (of this process or another) took it first
        return None

    def _wait_for_wake(self, deadline: float) -> bool:
        """Wait until a notification is handed to this worker (True) or the deadline passes (False)."""
        with self._wakes:
            while True:
                if self._pending_wakes:  # a notification another worker received for this one
                    self._pending_wakes -= 1
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                if not self._listening:
                    self._listening = True  # this worker listens for the process's idle workers
                    break
                self._wakes.wait(remaining)
        received = 0
        try:
            received = self._listen(deadline - time.monotonic())
        finally:
            with self._wakes:
                self._listening = False
                self._pending_wakes += max(received - 1, 0)
                self._wakes.notify(max(received, 1))  # one waiter listens next, the others take a wake each
        return received > 0

    def _listen(self, timeout: float) -> int:
        """Notifications received on the process's LISTEN connection within `timeout` (at least one, or 0)."""
        if timeout <= 0:
            return 0
        conn = self._listener
        if conn is not None and (conn.closed or conn.broken):
            self._close_quiet(conn)
            conn = None
        if conn is None:
            conn = self._connect()
            conn.execute('listen "{}"'.format(self.channel.replace('"', '""')))
            self._listener = conn
        return len(list(conn.notifies(timeout=timeout, stop_after=1)))

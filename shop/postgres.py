"""The app's PostgreSQL database class (psycopg 3): fewer round trips per transaction."""

import contextlib
import select
import threading

import psycopg
from peewee import __exception_wrapper__
from playhouse.postgres_ext import Psycopg3Database


def _close_quietly(stack: contextlib.ExitStack) -> None:
    """Leave a pipeline whose transaction already failed: the error being raised says why, and the
    pipeline's own "aborted" would only add a warning to the log (psycopg logs one when a pipeline
    is left with an exception in flight and its sync fails too)."""
    with contextlib.suppress(Exception):
        stack.close()


def usable(conn) -> bool:
    """Whether an idle connection can still be used, without a round trip.

    psycopg knows a connection is dead only once a statement failed on it (`closed`, `broken`). A
    server that restarted (`pg_ctl restart -m fast` or `-m immediate`, a failover, a PgBouncer
    restart, an idle-session timeout) closed the socket, and a server shutting down first sends a
    FATAL message: either way an idle connection's socket has something to read, where a live idle
    one has nothing. One poll() of the socket, no statement sent: a connection found so is dropped
    and a new one opened before the transaction starts.
    """
    if conn is None or conn.closed or conn.broken:
        return False
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        return True  # in a transaction or a pipeline: its statements will tell
    try:
        poller = select.poll()
        poller.register(conn.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
        return not poller.poll(0)
    except (OSError, ValueError, psycopg.Error):
        return False


class ShopPostgresDatabase(Psycopg3Database):
    """Psycopg3Database whose BEGIN travels with the transaction's first statement, and which runs
    several statements in one round trip (execute_together).

    peewee sends BEGIN on its own and waits for the answer: a round trip per write transaction
    (about a tenth of a booking's, a fifth of an emitted event's). Here `begin()` only notes the
    transaction, and its first statement goes out in a psycopg pipeline behind the BEGIN, both
    answered at once. Nothing else changes: the transaction starts before that statement runs, a
    transaction that ran no statement sends neither BEGIN nor COMMIT, and a raw cursor taken
    inside the transaction (executemany) gets its BEGIN first as before.

    `deferred_writes()` holds writes nobody reads the answer of (an event's deliveries and their
    jobs) in an open pipeline: they go out at once, and their answers come back with the
    transaction's next statement or its COMMIT, in that one round trip.
    """

    def __init__(self, *args, **kwargs):
        self._begin_pending = threading.local()  # per thread: the connection owing a BEGIN
        self._held = threading.local()  # per thread: (connection, open pipeline, inside the block)
        self._pipeline_failed = threading.local()  # per thread: the connection a pipeline failed on
        super().__init__(*args, **kwargs)

    def fresh_connection(self) -> None:
        """Outside a transaction: drop this thread's connection when it is closed or broken, its
        server hung up while it was idle, or a pipeline failed on it (_note_pipeline_failed), so the
        next statement opens a new one (at every request, job and transaction: begin(), and every
        statement run outside a transaction)."""
        if self._state.closed or self._state.transactions:
            return
        failed = getattr(self._pipeline_failed, "conn", None)
        if usable(self._state.conn) and (failed is None or failed is not self._state.conn):
            return
        self.drop_connection()

    def drop_connection(self) -> None:
        """Forget this thread's connection (closed quietly) outside a transaction; the next
        statement connects again."""
        conn = self._state.conn
        self._state.reset()
        self._begin_pending.conn = None
        self._held.state = None
        self._pipeline_failed.conn = None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def _connection_lost(self) -> bool:
        conn = self._state.conn
        return conn is None or conn.closed or conn.broken

    def begin(self, isolation_level=None):
        self.fresh_connection()
        if isolation_level or self._isolation_level or not psycopg.Pipeline.is_supported():
            return super().begin(isolation_level)
        self.connection()  # connect now, as peewee's own begin() would
        self._begin_pending.conn = self._state.conn
        return None

    def _owes_begin(self) -> bool:
        """Whether this thread's connection owes a BEGIN; the debt is cleared as it is asked."""
        conn = getattr(self._begin_pending, "conn", None)
        self._begin_pending.conn = None
        return conn is not None and conn is self._state.conn and not self._state.closed

    @contextlib.contextmanager
    def _checked(self):
        """Around a use of the connection: outside a transaction, a fresh one before, and one lost
        meanwhile dropped after a failure (inside a transaction nothing: the transaction tells)."""
        if self._state.transactions:
            yield
            return
        self.fresh_connection()
        try:
            yield
        except Exception:
            if not self._state.transactions and self._connection_lost():
                self.drop_connection()  # the next statement connects again
            raise

    def execute_sql(self, sql, params=None, named_cursor=None):
        with self._checked():
            return self._execute_sql(sql, params, named_cursor)

    def _execute_sql(self, sql, params=None, named_cursor=None):
        if self._holding(outside_block=True):  # held writes: this statement brings their answers
            if named_cursor:  # a server-side cursor cannot run in a pipeline: theirs come first
                self._flush()
            else:
                return self._flush(lambda: Psycopg3Database.execute_sql(self, sql, params))
        if named_cursor or not self._owes_begin():  # a server-side cursor gets its BEGIN in cursor()
            return super().execute_sql(sql, params, named_cursor=named_cursor)
        conn = self._state.conn
        try:
            with __exception_wrapper__, conn.pipeline():
                conn.execute("BEGIN")
                cursor = super().execute_sql(sql, params)
        except BaseException:
            self._note_pipeline_failed()
            raise
        return cursor

    def cursor(self, named_cursor=None):
        if not self._state.transactions:
            self.fresh_connection()
        if self._holding(outside_block=True):
            self._flush()
        if self._owes_begin():  # a raw cursor: its statements come after a BEGIN of their own
            with __exception_wrapper__:
                super().cursor().execute("BEGIN")
        return super().cursor(named_cursor)

    def commit(self):
        if self._holding():  # the COMMIT brings the held writes' answers (an error: no commit)
            return self._flush(lambda: Psycopg3Database.cursor(self).execute("COMMIT"))
        if self._owes_begin():  # no statement ran: there is no transaction to commit
            return None
        return super().commit()

    def rollback(self):
        if self._holding():
            with contextlib.suppress(Exception):  # their errors no longer matter
                self._flush()
        if self._owes_begin():
            return None
        if self._connection_lost():  # the server ended the transaction with the connection
            return None
        return super().rollback()

    def _note_pipeline_failed(self) -> None:
        """A statement failed inside a pipeline: this connection is dropped before its next use.

        psycopg prepares a statement once it has run a few times and records the name at send
        time; a failed pipeline can leave that record and the server's apart (a statement the
        server never parsed recorded as prepared), and every later use of it then fails with
        "prepared statement ... does not exist". A new connection starts both afresh: a connect
        only after such a failure (a database error inside a pipelined transaction)."""
        self._pipeline_failed.conn = self._state.conn

    @contextlib.contextmanager
    def deferred_writes(self):
        """Inside a transaction: the block's statements go out without waiting for their answers,
        which come with the transaction's next statement or its COMMIT. For writes whose result
        nobody reads (an error in one is raised there, and the transaction rolls back), and for
        reads whose rows are asked for later (shop.db.read_ahead). A block after another one's
        held statements joins them: both are answered by the same round trip."""
        if not self.in_transaction() or self._holding() and self._held.state[2]:
            yield  # outside a transaction, or inside a block already
            return
        if self._holding():  # an earlier block's statements wait for their answers: go on with them
            conn, stack, _ = self._held.state
        else:
            conn = self.connection()
            stack = contextlib.ExitStack()
            with __exception_wrapper__:
                stack.enter_context(conn.pipeline())
        self._held.state = (conn, stack, True)
        try:
            if self._owes_begin():
                conn.execute("BEGIN")
            yield
        except BaseException:
            self._held.state = None
            self._note_pipeline_failed()
            _close_quietly(stack)  # discard: the block failed
            raise
        self._held.state = (conn, stack, False)

    def answered(self, cursor):
        """A cursor of a held statement, once its answer is in: the held statements are sent and
        waited for now unless a statement since has brought their answers."""
        if cursor.pgresult is None and self._holding():
            self._flush()
        return cursor

    def _holding(self, outside_block: bool = False) -> bool:
        """Whether this thread's connection holds deferred writes (after their block, if asked)."""
        state = getattr(self._held, "state", None)
        if state is None or state[0] is not self._state.conn:
            return False
        return not state[2] if outside_block else True

    def _flush(self, send=None):
        """Send `send` behind the held writes, then wait for every answer (the first error raised)."""
        _, stack, _ = self._held.state
        self._held.state = None
        with __exception_wrapper__:
            try:
                result = send() if send is not None else None
            except BaseException:
                self._note_pipeline_failed()
                _close_quietly(stack)
                raise
            try:
                stack.close()
            except BaseException:
                self._note_pipeline_failed()
                raise
        return result

    def execute_together(self, statements: list[tuple[str, dict]]) -> list:
        """Run statements in order in one round trip (a pipeline); their cursors, results fetched.

        The server runs each one after the one before has finished, with a snapshot of its own
        (READ COMMITTED), exactly as if they were sent one by one; an error in one raises here and
        the ones after it do not run. Held statements go first, in the same round trip.
        """
        with self._checked():
            return self._execute_together(statements)

    def _execute_together(self, statements: list[tuple[str, dict]]) -> list:
        if self._holding():
            return self._flush(
                lambda: [Psycopg3Database.execute_sql(self, sql, params) for sql, params in statements]
            )
        conn = self.connection()
        try:
            with __exception_wrapper__, conn.pipeline():
                if self._owes_begin():
                    conn.execute("BEGIN")
                cursors = []
                for sql, params in statements:
                    cursors.append(super().execute_sql(sql, params))
        except BaseException:
            self._note_pipeline_failed()
            raise
        return cursors

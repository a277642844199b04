"""Round trips to PostgreSQL, counted from libpq's own trace of the protocol messages of this
thread's connection (the app's): what the client waited for, whatever the driver batched."""

import contextlib
import itertools
import tempfile

from shop.db import db


class RoundTrips:
    """What a traced block sent and got back: `count` waits for the server, `trace` the messages."""

    def __init__(self):
        self.count = 0
        self.trace = ""

    def read(self, trace: str) -> None:
        """Each turn from messages the client sent (F) to messages the server answered (B) is one
        round trip: the server answers nothing until the client asks it to (Sync, Flush)."""
        sides = [line[0] for line in trace.splitlines() if line.startswith(("F\t", "B\t"))]
        self.trace = trace
        self.count = sum(1 for sent, got in itertools.pairwise(sides) if (sent, got) == ("F", "B"))


@contextlib.contextmanager
def counted_round_trips():
    """Count the round trips of this thread's database connection inside the block (PostgreSQL)."""
    from psycopg import pq

    pgconn = db.connection().pgconn
    counted = RoundTrips()
    with tempfile.TemporaryFile("w+") as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            yield counted
        finally:
            pgconn.untrace()  # flushes the trace into the file
            trace.seek(0)
            counted.read(trace.read())

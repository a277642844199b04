"""Consumer heartbeats: each running consumer upserts its row every few seconds; health reads them."""

import os
import secrets
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta

from peewee import Case, fn

from shop import clock
from shop.db import write_transaction
from shop.models import ConsumerHeartbeat

# a row not refreshed for this long belongs to a consumer that was killed: the next start drops it
FORGET_AFTER = timedelta(days=1)


@dataclass(frozen=True)
class Consumers:
    """What the heartbeats say: how many consumers beat recently, and the newest beat."""

    running: int
    last_beat_at: datetime | None
    periodic: int = 0  # of the running ones, those that run the periodic tasks (the sweeps)


def new_consumer_id() -> str:
    """host:pid:random, unique to one run of one consumer process."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"


def beat(consumer_id: str, periodic: bool, started_at: datetime) -> None:
    """Record that this consumer is alive now (one small upsert in a short write transaction)."""
    now = clock.now()
    row = {
        "id": consumer_id,
        "host": socket.gethostname()[:255],
        "pid": os.getpid(),
        "periodic": periodic,
        "started_at": started_at,
        "beat_at": now,
    }
    with write_transaction():
        ConsumerHeartbeat.insert(row).on_conflict(
            conflict_target=[ConsumerHeartbeat.id], update={ConsumerHeartbeat.beat_at: now}
        ).execute()


def forget(consumer_id: str | None = None) -> int:
    """Drop a consumer's row as it stops, or (no id) the rows of consumers long gone."""
    query = ConsumerHeartbeat.delete()
    if consumer_id is None:
        query = query.where(ConsumerHeartbeat.beat_at < clock.now() - FORGET_AFTER)
    else:
        query = query.where(ConsumerHeartbeat.id == consumer_id)
    with write_transaction():
        return query.execute()


def consumers(stale_after: float) -> Consumers:
    """The consumers whose last beat is at most `stale_after` seconds old, and the newest beat."""
    since = clock.now() - timedelta(seconds=stale_after)
    row = ConsumerHeartbeat.select(
        fn.MAX(ConsumerHeartbeat.beat_at).alias("last"),
        fn.SUM(Case(None, [(ConsumerHeartbeat.beat_at >= since, 1)], 0)).alias("running"),
        fn.SUM(Case(None, [((ConsumerHeartbeat.beat_at >= since) & ConsumerHeartbeat.periodic, 1)], 0)).alias(
            "periodic"
        ),
    ).dicts()[0]
    last = row["last"]
    if isinstance(last, str):  # an aggregate comes back untyped on SQLite
        last = datetime.fromisoformat(last)
    return Consumers(int(row["running"] or 0), last, int(row["periodic"] or 0))

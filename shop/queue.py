"""The job queue: the `huey` object (it imports no task) and enqueue(), the one way code queues a job.

Nothing is opened at import: `setup()` points the queue and the database at the configured file.
The app factory calls it, the worker command calls it, and a queue used before either (a
`huey_consumer tasks.huey` scheduler thread, a script) sets itself up from the environment.
"""

import functools
import logging
import time
import uuid

from huey import Huey
from huey.consumer import Consumer
from huey.registry import Message

from shop.config import is_postgres, load_config
from shop.db import init_database, postgres_options, unavailable
from shop.queue_storage import SharedFileSqliteStorage, SharedPostgresStorage

# the jobs domain code queues, by the name the consumer registers them under (tasks/<module>.py)
DELIVER_WEBHOOK = "tasks.webhooks.deliver_webhook"
RECOVER_DELIVERIES = "tasks.webhooks.recover_deliveries"
SEND_MESSAGE = "tasks.messages.send_message"

_settings: dict = {}
log = logging.getLogger("shop.queue")

# how long a job that meets a database it cannot reach waits for it, trying again with backoff,
# before it gives up (the sweeps re-enqueue what it was about: nothing is lost, only later)
PATIENCE_SECONDS = 120
FIRST_PAUSE, LONGEST_PAUSE = 0.25, 2.0


def setup(config) -> None:
    """Point the queue and the jobs at the app's database, and keep `config` for the jobs.

    On SQLite the queue is Huey's SQLite storage in the same file; on PostgreSQL, Huey's
    PostgreSQL storage in the same database (its tables huey_task, huey_schedule, ...).
    """
    target, busy_timeout = config["DATABASE"], float(config["DB_BUSY_TIMEOUT_SECONDS"])
    synchronous_commit = str(config.get("DB_SYNCHRONOUS_COMMIT", "on"))
    init_database(target, busy_timeout, synchronous_commit)
    if is_postgres(target):
        if getattr(huey.storage, "dsn", None) != target:
            huey.storage.close()
            options = postgres_options(busy_timeout, synchronous_commit)
            huey.storage = SharedPostgresStorage(huey.name, target, options=options)
    else:
        if not isinstance(huey.storage, SharedFileSqliteStorage):
            huey.storage.close()
            huey.storage = huey.create_storage()
        huey.storage.use_file(target, busy_timeout)
    _settings["config"] = config


def settings():
    """The configuration the queue was set up with (loaded from the environment if it was not)."""
    if "config" not in _settings:
        setup(load_config())
    return _settings["config"]


class ShopHuey(Huey):
    """Huey that sets itself up from the configuration before its first enqueue or consumer, so the
    storage (SQLite or PostgreSQL) is the configured database's even when nothing called setup()."""

    def enqueue(self, task):
        settings()
        return super().enqueue(task)

    # the consumer's class: tasks/ names the service's own (its start-up checks and heartbeat), so
    # `huey_consumer tasks.huey` starts the same consumer as `flask shop worker`
    consumer_class = Consumer

    def create_consumer(self, **options):
        settings()
        return self.consumer_class(self, **options)


huey = ShopHuey(
    "shop",
    storage_class=SharedFileSqliteStorage,  # with no file yet: setup() names it, or settings() on first use
    journal_mode="wal",
    results=False,
    create_tables=False,
    on_first_use=settings,
)


# what runs once the database is back after jobs met it away (tasks.worker registers the sweeps)
_on_recovery: list = []
_last_recovery = [0.0]
RECOVERY_EVERY = 10.0  # seconds: one outage, one run of the hooks per process


def on_recovery(hook):
    """Register `hook` to run (once per outage and process) when a patient job got through."""
    _on_recovery.append(hook)
    return hook


def _recovered() -> None:
    now = time.monotonic()
    if now - _last_recovery[0] < RECOVERY_EVERY:
        return
    _last_recovery[0] = now
    for hook in _on_recovery:
        try:
            hook()
        except Exception:
            log.warning("after the database's return: %s failed", hook.__name__, exc_info=True)


def patient(job):
    """A job (under @huey.task) that runs again, after a pause that doubles up to LONGEST_PAUSE,
    while the database cannot be reached or cannot take its writes (a restart, a failover, a full
    disk): each of its transactions either committed or rolled back, so running it again does what
    is left. The worker thread's connection is replaced at the job's next transaction."""

    @functools.wraps(job)
    def run(*args, **kwargs):
        pause, deadline = FIRST_PAUSE, time.monotonic() + PATIENCE_SECONDS
        while True:
            try:
                result = job(*args, **kwargs)
                if pause > FIRST_PAUSE:  # it had to wait: the database is back
                    _recovered()
                return result
            except Exception as error:
                if not unavailable(error) or time.monotonic() + pause > deadline:
                    raise
                log.warning("%s: database unavailable, again in %.2f s (%s)", job.__name__, pause, error)
            time.sleep(pause)
            pause = min(pause * 2, LONGEST_PAUSE)

    return run


def enqueue(task: str, *args) -> None:
    """Queue the job named `task` (one of the names above) with plain arguments: ids, never rows.

    The message names the job instead of holding it, so the web app never imports `tasks`; inside
    one of the app's write transactions the job commits with it (shop.queue_storage).
    """
    settings()
    message = Message(str(uuid.uuid4()), task, None, 0, 0, None, args, {})
    huey.storage.enqueue(huey.serializer.serialize(message))


def queued(task: str, limit: int) -> list[tuple[int, tuple]]:
    """Jobs named `task` among the next `limit` in the queue, as (job id, args), oldest first.

    A read: they stay queued. A job taken with take() inside the transaction that does its work
    (a batch of webhook deliveries) then never runs on its own.
    """
    settings()
    return queued_in(huey.storage.head(limit), task)


def queued_statement(limit: int) -> tuple[str, dict]:
    """queued()'s read of the next `limit` jobs as (named_sql statement, parameters), to run with
    other statements (shop.db.run_together); queued_in() reads its rows."""
    settings()
    return huey.storage.head_statement(limit)


def queued_in(rows: list, task: str) -> list[tuple[int, tuple]]:
    """The jobs named `task` among rows of queued_statement(), as (job id, args), oldest first."""
    jobs = []
    for job_id, data in rows:
        try:
            message = huey.serializer.deserialize(bytes(data))
        except Exception:  # not ours to judge here: the consumer reports it when it runs the job
            continue
        if message.name == task:
            jobs.append((job_id, tuple(message.args or ())))
    return jobs


def take(job_ids: list) -> None:
    """Remove these jobs from the queue, in the caller's write transaction (see queued())."""
    huey.storage.take(list(job_ids))

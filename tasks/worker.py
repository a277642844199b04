"""The consumer that `flask shop worker`, `python -m tasks`, the demo and `huey_consumer tasks.huey` run."""

import logging

from huey.consumer import Consumer

from shop.config import ConfigError, check_settings, log_level
from shop.platform import logs, metrics, redaction
from shop.queue import huey, on_recovery, settings
from tasks.heartbeat import Heartbeat

# the flag of a consumer that leaves the periodic tasks (the sweeps, the pruning) to another one:
# with several consumers on one PostgreSQL database, one runs them and the rest start with it
NO_PERIODIC = "--no-periodic"


# the longest an idle worker sleeps between looks at a SQLite queue (Huey's default is 10 s, its
# pause growing 15 % a look from 0.1 s): a webhook queued after a quiet half minute waited 1 to 3 s,
# up to 10; with every worker looking at least once a second, 0.06 to 0.57 s (docs/decisions.md).
# PostgreSQL's workers are woken by NOTIFY and never sleep this way.
IDLE_LOOK_EVERY = 1.0


def run(workers: int = 4, periodic: bool = True) -> None:
    """Run the Huey consumer with thread workers (and the periodic scheduler unless told not to)."""
    build(workers, periodic).run()


def build(workers: int, periodic: bool) -> "ShopConsumer":
    """The consumer run() runs, not yet started."""
    return huey.create_consumer(
        workers=workers,
        worker_type="thread",
        periodic=periodic,
        check_worker_health=True,
        max_delay=IDLE_LOOK_EVERY,
    )


class ShopConsumer(Consumer):
    """Huey's consumer with the service's start-up, whichever command started it (`flask shop
    worker`, `python -m tasks`, the demo, or `huey_consumer tasks.huey`): it refuses settings, a
    schema or a secret key it cannot work with, beats for /api/v1/health, and queues what an earlier
    consumer left due before its workers start."""

    def run(self) -> None:
        config = settings()
        try:
            check_settings(config)
        except ConfigError as error:
            raise SystemExit(f"the consumer will not start: {error}") from None
        logs.configure(config)  # idempotent: masks the configured secrets in every log line
        huey_log = logging.getLogger("huey")
        if huey_log.handlers:  # huey_consumer's own (its -l, -v, -q): Huey's lines go there alone, masked
            huey_log.propagate = False
            redaction.install(huey_log)
        level = log_level(config)
        if level != "DEBUG":  # Huey's two lines per task ("Executing", "executed in") cost a tenth of a send
            logging.getLogger("huey").setLevel(logging.WARNING)
            logging.getLogger("huey.consumer").setLevel(level)
        metrics.setup(config)  # before any job counts an attempt or a send
        refuse_another_schema()
        refuse_bad_retention()
        refuse_another_secret_key(config)
        beating = Heartbeat(self.periodic, float(config["CONSUMER_HEARTBEAT_SECONDS"])).start()
        try:
            resume_unfinished_work()
            super().run()
        finally:
            beating.stop()


def refuse_another_schema() -> None:
    """Run no job on a database at another schema version than this release's (as the app refuses)."""
    from shop import migrations
    from shop.db import db
    from shop.models import ALL_MODELS

    problem = migrations.status(db, ALL_MODELS).problem()
    if problem:
        raise SystemExit(f"the consumer will not start: {problem}")


def refuse_bad_retention() -> None:
    """Start no consumer whose periodic pruning would fail on every run (or prune what the spec keeps)."""
    from shop.domain.retention import RetentionError, windows

    try:
        windows(settings())
    except RetentionError as error:
        raise SystemExit(f"the consumer will not start: {error}") from None


def refuse_another_secret_key(config) -> None:
    """Deliver nothing when the stored secrets do not open with the configured key (as the app)."""
    from shop.domain.secret_keys import start_up_problem

    problem = start_up_problem(config)
    if problem:
        raise SystemExit(f"the consumer will not start: {problem}")


@on_recovery
def resume_after_outage() -> None:
    """The database came back after an outage: a delivery or send claimed just before it went away
    (its attempt made, its outcome not recorded) is due again once its hold lapses; sweep then,
    rather than at the next minute's sweep."""
    from shop.domain.messaging.delivery import claim_seconds
    from shop.domain.webhooks.engine import hold_seconds
    from tasks.messages import sweep_messages
    from tasks.webhooks import sweep_webhooks

    sweep_webhooks.schedule(delay=hold_seconds(settings()) + 1)
    sweep_messages.schedule(delay=claim_seconds(settings()) + 1)


def resume_unfinished_work() -> None:
    """Enqueue what a previous consumer left due, and again once its held attempts have lapsed."""
    from shop.domain.messaging.delivery import claim_seconds
    from shop.domain.webhooks.engine import hold_seconds
    from tasks.messages import sweep_messages
    from tasks.reminders import sweep_reminders
    from tasks.webhooks import sweep_webhooks

    sweep_webhooks()
    sweep_messages()
    sweep_reminders()
    sweep_webhooks.schedule(delay=hold_seconds(settings()) + 1)
    sweep_messages.schedule(delay=claim_seconds(settings()) + 1)

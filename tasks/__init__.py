"""Huey on the same SQLite file as the app; the consumer runs `huey_consumer tasks.huey`."""

from huey import Huey

from shop.config import load_config
from shop.db import init_database
from tasks.storage import SharedFileSqliteStorage

config = load_config()
init_database(config["DATABASE"], float(config["DB_BUSY_TIMEOUT_SECONDS"]))
huey = Huey(
    "shop",
    storage_class=SharedFileSqliteStorage,
    filename=config["DATABASE"],
    journal_mode="wal",
    results=False,
    timeout=float(config["DB_BUSY_TIMEOUT_SECONDS"]),
)

from tasks import maintenance, messages, webhooks  # noqa: E402,F401  (registers the tasks with the consumer)

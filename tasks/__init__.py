"""Huey on the same SQLite file as the app; the consumer runs `huey_consumer tasks.huey`."""

from huey import Huey
from huey.storage import SqliteStorage

from shop.config import load_config
from shop.db import init_database


class SqliteStorageNormalSync(SqliteStorage):
    """Huey's SQLite storage with synchronous=NORMAL, like the app's own connections.

    SqliteHuey runs at synchronous=FULL, an fsync on every enqueue (~4 ms here); in WAL mode NORMAL
    is still safe against corruption and loses at most the last commits on a power cut.
    """

    def _create_connection(self):
        conn = super()._create_connection()
        conn.execute("pragma synchronous=1")
        return conn


config = load_config()
init_database(config["DATABASE"], float(config["DB_BUSY_TIMEOUT_SECONDS"]))
huey = Huey("shop", storage_class=SqliteStorageNormalSync, filename=config["DATABASE"],
            journal_mode="wal", results=False, timeout=float(config["DB_BUSY_TIMEOUT_SECONDS"]))

from tasks import maintenance, messages, webhooks  # noqa: E402,F401  (registers the tasks with the consumer)

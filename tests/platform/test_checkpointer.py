"""The WAL is copied into the database file by the background checkpointer, not by a writer's commit."""

import os
import threading
import time

import pytest

from shop.db import SAFETY_NET_PAGES, db, write_transaction
from tests.helpers.processes import wait_until


@pytest.mark.sqlite_only
def test_a_background_thread_checkpoints_what_writers_commit(app):
    assert any(thread.name == "wal-checkpointer" for thread in threading.enumerate())
    assert db.execute_sql("PRAGMA wal_autocheckpoint").fetchone()[0] == SAFETY_NET_PAGES
    time.sleep(0.2)  # what earlier tests left in the WAL is checkpointed by now
    before = os.stat(db.database).st_mtime_ns
    for i in range(50):  # about 100 pages: far below the safety net, so no commit checkpoints
        with write_transaction():
            db.execute_sql(
                "INSERT INTO kv (queue, key, value) VALUES ('checkpoint-test', ?, randomblob(8000))",
                (f"k{i}",),
            )
    # in WAL mode the database file is written only by a checkpoint, and only the thread runs one
    wait_until(lambda: os.stat(db.database).st_mtime_ns > before, timeout=5)

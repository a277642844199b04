"""The queue seam: jobs queued by name are the consumer's jobs, and importing opens nothing."""

import os
import subprocess
import sys

from shop import queue
from tests.helpers.processes import ROOT

IMPORT_ONLY = """
import shop.queue, tasks  # the web side's queue and the consumer's entry
from shop.db import db
assert db.database is None and tasks.huey.storage.filename is None, "opened at import"
"""


def test_every_job_the_app_queues_is_one_the_consumer_runs():
    import tasks

    registered = tasks.huey._registry._registry
    assert queue.DELIVER_WEBHOOK in registered and queue.SEND_MESSAGE in registered


def test_importing_the_queue_and_the_consumer_opens_no_file(tmp_path):
    path = tmp_path / "never.sqlite3"
    env = {**os.environ, "SHOP_INSTANCE_PATH": str(tmp_path / "instance"), "SHOP_DATABASE": str(path)}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ONLY], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert not path.exists() and not (tmp_path / "instance").exists()

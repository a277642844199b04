"""The queue seam: jobs queued by name are the consumer's jobs, and importing opens nothing."""

import os
import subprocess
import sys

import pytest

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


class Pauses:
    """A worker's stop flag that records each pause instead of sleeping it."""

    def __init__(self):
        self.seconds = []

    def wait(self, seconds):
        self.seconds.append(seconds)
        return False

    def is_set(self):
        return False


@pytest.mark.sqlite_only  # PostgreSQL's workers wait for NOTIFY instead
def test_an_idle_worker_looks_at_the_queue_at_least_once_a_second(app):
    from tasks.worker import IDLE_LOOK_EVERY, build

    worker = build(workers=1, periodic=False)._create_worker()
    worker.stop_flag = pauses = Pauses()
    for _ in range(60):  # a quiet minute and more at Huey's default, whose pauses grow to 10 s
        worker.loop()
    assert len(pauses.seconds) == 60  # the queue was empty every time: a pause after each look
    assert pauses.seconds[0] == pytest.approx(0.1)  # as soon as work stops, looks stay frequent
    assert max(pauses.seconds) == IDLE_LOOK_EVERY == 1.0

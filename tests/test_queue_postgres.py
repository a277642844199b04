"""The PostgreSQL queue's lean take: revokes still hold, and every notification wakes a waiting worker."""

import threading
import time

import pytest
from huey import Huey
from huey.constants import EmptyData

from shop.db import db
from shop.queue_storage import SharedPostgresStorage

pytestmark = pytest.mark.postgres_only


@pytest.fixture
def queue(app):
    """A queue of its own in the app's database (its own rows of huey_task), drained before and after."""
    huey = Huey(
        "queue-test", results=False, storage_class=SharedPostgresStorage, dsn=db.database, read_timeout=10
    )
    huey.ran = []

    @huey.task(context=True)
    def note(n, revoke_itself=False, task=None):
        if revoke_itself:  # a revoke that arrives while the task runs
            huey.revoke_by_id(task.id)
        huey.ran.append(n)

    huey.note = note
    huey.storage.flush_queue()
    huey.storage.flush_results()
    yield huey
    huey.storage.flush_queue()
    huey.storage.flush_results()
    huey.storage.close()


def run_queued(huey: Huey) -> None:
    """What a consumer's worker does until the queue is empty: take a task, execute it."""
    huey.storage.blocking = False
    while (task := huey.dequeue()) is not None:
        huey.execute(task)


def test_a_task_revoked_before_it_is_taken_does_not_run(queue):
    revoked, kept = queue.note.s(1), queue.note.s(2)
    queue.enqueue(revoked)
    queue.enqueue(kept)
    queue.revoke_by_id(revoked.id)

    run_queued(queue)

    assert queue.ran == [2]


def test_a_revoke_of_a_whole_task_type_holds(queue):
    queue.note.revoke()  # every note until restored
    queue.enqueue(queue.note.s(1))
    run_queued(queue)
    queue.note.restore()
    queue.enqueue(queue.note.s(2))
    run_queued(queue)

    assert queue.ran == [2]


def test_a_revoke_sent_while_the_task_ran_is_cleared_by_the_next_take(queue):
    task = queue.note.s(1, revoke_itself=True)
    queue.enqueue(task)

    run_queued(queue)  # the last take (finding nothing) clears it, as Huey does after the task

    assert queue.ran == [1]
    assert queue.storage.peek_data(f"r:{task.id}") is EmptyData
    queue.enqueue(queue.note.s(2))
    run_queued(queue)
    assert queue.ran == [1, 2]


def test_each_notification_wakes_a_waiting_worker(queue):
    taken, stop = [], time.monotonic() + 30

    def worker():
        while time.monotonic() < stop:
            data = queue.storage.dequeue()  # waits up to read_timeout (10 s) for a notification
            if data is not None:
                taken.append(time.monotonic())
                return

    workers = [threading.Thread(target=worker) for _ in range(4)]
    for thread in workers:
        thread.start()
    time.sleep(0.5)  # all four wait: one on the LISTEN connection, three for their turn
    sent = time.monotonic()
    for n in range(3):
        queue.enqueue(queue.note.s(n))
    deadline = sent + 5  # well within the read timeout: only the notifications can have woken them
    while len(taken) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    stop = time.monotonic()  # the fourth worker gives up at its next timeout
    for thread in workers:
        thread.join(timeout=15)

    assert len(taken) == 3 and max(taken) < deadline

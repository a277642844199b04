"""A worker SIGKILLed at each point of a POST with an Idempotency-Key, then the request retried with
the key: the effect happens once every time, on both backends (the claim of the key, the view's
changes and the saved response commit as one transaction: shop/platform/idempotency.py)."""

import os
import time

import requests

from shop.models import Customer
from tests.helpers.processes import wait_until
from tests.helpers.servers import gunicorn

POINTS = ("before_commit", "after_commit", "after_response")


def send(base, headers, name, key):
    headers = {**headers, "Idempotency-Key": key}
    return requests.post(f"{base}/_probe_kill", json={"display_name": name}, headers=headers, timeout=30)


def retry(base, headers, name, key):
    """The client's retry: again until the server answers (gunicorn starts a new worker meanwhile)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return send(base, headers, name, key)
        except requests.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_a_worker_killed_at_any_point_of_a_request_leaves_one_effect_for_its_retry(app, acme, tmp_path):
    kill_file = tmp_path / "kill-at"
    env = {**os.environ, "SHOP_TEST_KILL_FILE": str(kill_file)}
    with gunicorn(env, tmp_path / "gunicorn.log", app="tests.helpers.kill_app:app") as base:
        for point in POINTS:
            kill_file.write_text(point)
            key = f"kill-{point}"
            try:
                first = send(base, acme, point, key)
            except requests.ConnectionError:
                first = None  # the worker died before it answered
            # after_response: the answer may reach us before the worker closes the response and dies
            wait_until(lambda: not kill_file.exists(), timeout=10, interval=0.05)
            if point == "after_response":
                assert first is not None and first.status_code == 201
            else:
                assert first is None, first.text
            again = retry(base, acme, point, key)
            assert again.status_code == 201, (point, again.text)
            replayed = again.headers.get("Idempotent-Replayed") == "true"
            assert replayed == (point != "before_commit"), point  # committed: the retry replays it
            if first is not None:
                assert again.json() == first.json()
            assert Customer.select().where(Customer.display_name == point).count() == 1, point

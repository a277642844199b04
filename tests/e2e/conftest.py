"""Real processes: the Huey consumer and the demo server, on the test run's database file."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.e2e.receivers import free_port  # noqa: F401  (re-exported for the tests)

ROOT = Path(__file__).resolve().parents[2]


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture
def start_consumer():
    """Start real Huey consumer processes (`python -m tasks`) on the run's database, with extra env."""
    procs = []

    def start(**env):
        log = open(Path(os.environ["SHOP_INSTANCE_PATH"]) / f"consumer-{len(procs)}.log", "w")
        proc = subprocess.Popen([sys.executable, "-m", "tasks"], cwd=ROOT, env={**os.environ, **env},
                                stdout=log, stderr=subprocess.STDOUT, text=True)
        procs.append((proc, log))
        return proc

    yield start
    for proc, log in procs:
        stop(proc)
        log.close()


@pytest.fixture
def consumer(start_consumer):
    """A real Huey consumer process with the default configuration."""
    return start_consumer()


def wait_until(predicate, timeout: float = 20, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")


def http_ok(url: str, **kwargs) -> bool:
    try:
        return requests.get(url, timeout=2, **kwargs).status_code == 200
    except requests.RequestException:
        return False

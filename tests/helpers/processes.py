"""Real processes in tests: where the project is, stopping a process, waiting for a condition."""

import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
# the consumer as DESIGN.md names it: `python -m tasks` (what `flask shop worker` runs) and Huey's
# own `huey_consumer tasks.huey` (from the environment's bin folder) start the same consumer
CONSUMERS = {
    "python -m tasks": [sys.executable, "-m", "tasks"],
    "huey_consumer": [
        str(Path(sys.executable).parent / "huey_consumer"),
        "tasks.huey",
        "-k",
        "thread",
        "-w",
        "2",
    ],
}


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


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

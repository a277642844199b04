"""Real processes in tests: where the project is, stopping a process, waiting for a condition."""

import subprocess
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]


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

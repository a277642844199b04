"""Real processes: the Huey consumer and the demo server, on the test run's database file."""

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.processes import CONSUMERS, ROOT, stop


@pytest.fixture
def start_consumer():
    """Start real Huey consumer processes (`python -m tasks`, or another of CONSUMERS) on the run's
    database, with extra env."""
    procs = []

    def start(command: str = "python -m tasks", **env):
        log = open(Path(os.environ["SHOP_INSTANCE_PATH"]) / f"consumer-{len(procs)}.log", "w")
        proc = subprocess.Popen(
            CONSUMERS[command],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
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


# the browser harness of the console (issue 16): the server, a headless Chromium, a signed-in session
from tests.helpers.browser import console, console_server, signed_in  # noqa: E402,F401

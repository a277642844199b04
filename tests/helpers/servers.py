"""A real API server for a test: gunicorn with the shipped settings on a free loopback port."""

import contextlib
import subprocess
import sys
from pathlib import Path

from tests.helpers.processes import ROOT, http_ok, stop, wait_until
from tests.helpers.receivers import free_port


@contextlib.contextmanager
def gunicorn(env: dict, log_path: Path, workers: int = 1, app: str = "app:app", threads: int | None = None):
    """Serve `app` (app:app) under gunicorn with `env`; yields the base URL of /api/v1 once it answers."""
    port = free_port()
    log = open(log_path, "w")
    argv = [sys.executable, "-m", "gunicorn", "-c", "python:shop.gunicorn_conf"]
    argv += ["--bind", f"127.0.0.1:{port}", "--workers", str(workers)]
    argv += ["--threads", str(threads)] if threads else []
    argv += [app]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}/api/v1"
        wait_until(lambda: http_ok(f"{base}/health") or proc.poll() is not None, timeout=30)
        assert proc.poll() is None, log_path.read_text()[-2000:]
        yield base
    finally:
        stop(proc)
        log.close()

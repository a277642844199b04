"""Throughput of the authenticated GET /api/v1/me against the bare discovery index GET /api/v1 under gunicorn.

The baseline does no database work (no key, no bucket, no usage row), so the ratio is what the
request pipeline costs; /api/v1/health, which reads the consumer heartbeat and the backlog, is
measured beside them and printed as its own figure (issue 28)."""

import argparse
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from bench_result import report_result

# run as `python bench/platform.py`, this file shadows the standard `platform` module for whatever it
# imports; none of the modules above imports that, and the app runs in its own processes from ROOT
ROOT = Path(__file__).resolve().parent.parent
TOKEN = "sk_test_bench_0000000001"
FIXTURE = {
    "tenants": [
        {
            "id": "bench",
            "name": "Bench",
            "api_keys": [{"id": "key_bench", "token": TOKEN, "mode": "test", "scopes": ["customers.read"]}],
        }
    ]
}
# a bucket so deep and so fast to refill that no request is refused: we measure its cost, not its 429s
HUGE = "1000000000"
GOAL = 0.5
WORKERS = 2


class BenchFailed(Exception):
    """The run could not produce trustworthy figures (no server, refusals, errors from wrk)."""


def parse_args() -> argparse.Namespace:
    """Command-line options; the defaults are the configuration docs/performance.md reports."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run (default 10)")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections (default 32)")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads (default 2)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, best of each (default 2)")
    parser.add_argument(
        "--worker-class",
        choices=("sync", "gthread"),
        default="gthread",
        help="gunicorn worker class, 2 workers either way (default gthread, as gunicorn.conf.py runs)",
    )
    parser.add_argument(
        "--worker-threads", type=int, default=4, help="threads per gthread worker (default 4)"
    )
    args = parser.parse_args()
    if not (1 <= args.duration <= 120 and 1 <= args.rounds <= 5 and 1 <= args.connections <= 256):
        parser.error("keep the load bounded: duration 1-120 s, rounds 1-5, connections 1-256")
    return args


def ensure_wrk() -> str:
    """The wrk binary, installed from Debian's packages when it is missing."""
    found = shutil.which("wrk")
    if found:
        return found
    print("wrk not found: apt-get install -y wrk", flush=True)
    install = ["apt-get", "install", "-y", "-q", "wrk"]
    if subprocess.run(install, timeout=300).returncode != 0:
        # a fresh machine has no package lists yet
        subprocess.run(["apt-get", "update", "-q"], timeout=300, check=True)
        subprocess.run(install, timeout=300, check=True)
    found = shutil.which("wrk")
    if not found:
        raise BenchFailed("wrk is still missing after apt-get install")
    return found


def shop_env(folder: Path) -> dict:
    """The environment the loader and gunicorn share: a throwaway instance folder and database."""
    return dict(
        os.environ,
        SHOP_INSTANCE_PATH=str(folder),
        SHOP_DATABASE=str(folder / "bench.sqlite3"),
        SHOP_SECRET_KEY="bench-secret",
        SHOP_RATE_LIMIT_CAPACITY=HUGE,
        SHOP_RATE_LIMIT_REFILL=HUGE,
    )


def load_fixture(folder: Path, env: dict) -> None:
    """Create the tables and the bench tenant with its key through the real CLI."""
    path = folder / "fixture.json"
    path.write_text(json.dumps(FIXTURE))
    command = [sys.executable, "-m", "flask", "--app", "app", "shop", "load", str(path)]
    subprocess.run(command, cwd=ROOT, env=env, check=True, timeout=120, stdout=subprocess.DEVNULL)


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_gunicorn(args, port: int, env: dict, log_path: Path) -> subprocess.Popen:
    """gunicorn app:app with 2 workers of the chosen class, bound to loopback only."""
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "--workers",
        str(WORKERS),
        "--bind",
        f"127.0.0.1:{port}",
        "--worker-class",
        args.worker_class,
        "--log-level",
        "warning",
    ]
    # gunicorn.conf.py (read from ROOT, the service's defaults) sets 4 threads, and gunicorn runs
    # "sync" with threads as gthread: sync is asked for with one thread (until session 10 the
    # default "sync" ran as gthread x 4, like the tables of docs/performance.md since 2026-11-24)
    command += ["--threads", str(args.worker_threads if args.worker_class == "gthread" else 1)]
    with open(log_path, "wb") as log:
        return subprocess.Popen(command + ["app:app"], cwd=ROOT, env=env, stdout=log, stderr=log)


def get(url: str, token: str | None = None) -> tuple[int, dict]:
    """One GET: its status and headers (an HTTP error status is returned, not raised)."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


def wait_for_health(base: str, server: subprocess.Popen, timeout: float = 30) -> None:
    """Poll /health until the server answers, or give up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise BenchFailed(f"gunicorn exited with {server.returncode} before it was healthy")
        try:
            if get(base + "/health")[0] == 200:
                return
        except OSError:
            pass  # not listening yet
        time.sleep(0.2)
    raise BenchFailed(f"no healthy answer from {base}/health within {timeout:.0f} s")


def check_me(base: str) -> None:
    """Before loading it: /me answers 200 for the key and its bucket is nowhere near empty."""
    status, headers = get(base + "/me", TOKEN)
    remaining = int(headers.get("RateLimit-Remaining", "0"))
    if status != 200 or remaining < 1_000_000:
        raise BenchFailed(
            f"/me answered {status} with RateLimit-Remaining {remaining}: the run would measure refusals"
        )


def run_wrk(wrk: str, args, url: str, token: str | None) -> dict:
    """One bounded wrk run; its requests/s, request count and any error lines."""
    # a response slower than --timeout shows as a socket timeout, which makes the run invalid
    command = [
        wrk,
        "-t",
        str(args.threads),
        "-c",
        str(args.connections),
        "-d",
        f"{args.duration}s",
        "--timeout",
        "5s",
    ]
    if token:
        command += ["-H", f"Authorization: Bearer {token}"]
    done = subprocess.run(command + [url], capture_output=True, text=True, timeout=args.duration + 60)
    return parse_wrk(done.stdout, done.returncode)


def parse_wrk(output: str, returncode: int) -> dict:
    """Requests/s and the request count from wrk's report; non-2xx/3xx and socket errors as problems."""
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    total = re.search(r"(\d+) requests in", output)
    problems = re.findall(r"^\s*(Non-2xx or 3xx responses:.*|Socket errors:.*)$", output, re.MULTILINE)
    if returncode != 0 or rate is None or total is None:
        problems.append(f"wrk exited {returncode}: {output.strip()[-300:]}")
    return {
        "rps": float(rate.group(1)) if rate else 0.0,
        "requests": int(total.group(1)) if total else 0,
        "problems": problems,
    }


# (name, path under /api/v1, token): the bare index, the health check, the authenticated read
ROUTES = (("index", "", None), ("health", "/health", None), ("me", "/me", TOKEN))


def measure(wrk: str, args, base: str) -> dict:
    """Alternate the routes for the given rounds; per route, its best run and its request count."""
    results = {name: {"best": None, "requests": 0} for name, _, _ in ROUTES}
    for round_number in range(1, args.rounds + 1):
        for name, path, token in ROUTES:
            run = run_wrk(wrk, args, base + path, token)
            print(
                f"round {round_number} {name:>6}: {run['rps']:9.1f} req/s ({run['requests']} requests)",
                flush=True,
            )
            if run["problems"]:
                raise BenchFailed(f"the run of /{name} is invalid: {'; '.join(run['problems'])}")
            kept = results[name]
            kept["requests"] += run["requests"]
            if kept["best"] is None or run["rps"] > kept["best"]:
                kept["best"] = run["rps"]
    return results


def usage_rows(folder: Path) -> int:
    """How many usage-log rows the key's requests wrote (each /me request should have written one)."""
    with sqlite3.connect(folder / "bench.sqlite3") as connection:
        query = "SELECT COUNT(*) FROM usage_log WHERE api_key_id = 'key_bench'"
        return connection.execute(query).fetchone()[0]


def report(args, results: dict, logged: int) -> float:
    """Print both rates, the ratio against the goal, and the configuration they came from."""
    index, health, me = (results[name]["best"] for name in ("index", "health", "me"))
    ratio = me / index
    threads = f" x {args.worker_threads} threads" if args.worker_class == "gthread" else ""
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"\nmachine: {os.cpu_count()} cores, load average {load} (other work here makes the numbers noisy)")
    print(
        f"gunicorn {WORKERS} {args.worker_class} workers{threads}; "
        f"wrk -t{args.threads} -c{args.connections} -d{args.duration}s per run, "
        f"best of {args.rounds} alternating rounds"
    )
    print(f"GET /api/v1        : {index:9.1f} req/s  (the baseline: no database work)")
    print(f"GET /api/v1/health : {health:9.1f} req/s  ({health / index:.3f} of the baseline)")
    print(f"GET /api/v1/me     : {me:9.1f} req/s")
    print(f"ratio me/index     : {ratio:9.3f}  (goal >= {GOAL}: {'met' if ratio >= GOAL else 'NOT met'})")
    report_result("GET /me against GET /api/v1", me, index, "req/s", GOAL, at_least=True)
    counted = results["me"]["requests"] + 1  # check_me's request
    # wrk counts only the responses it read before its deadline, so the server may have logged a few more
    missing = " (usage rows are MISSING)" if logged < counted else ""
    print(f"usage rows written : {logged} for {counted} /me responses{missing}")
    return ratio


def serve_and_measure(args, wrk: str, folder: Path) -> dict:
    """Load the fixture, start gunicorn on a free loopback port, measure, and always stop it."""
    env = shop_env(folder)
    load_fixture(folder, env)
    port = free_port()
    server = start_gunicorn(args, port, env, folder / "gunicorn.log")
    try:
        base = f"http://127.0.0.1:{port}/api/v1"
        wait_for_health(base, server)
        check_me(base)
        return measure(wrk, args, base)
    finally:
        stop(server, folder / "gunicorn.log")


def stop(server: subprocess.Popen, log_path: Path) -> None:
    """Stop gunicorn (SIGTERM, then SIGKILL) and show what it logged, if anything."""
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=10)
    logged = log_path.read_text(errors="replace").strip()
    if logged:
        print("gunicorn log (last lines):\n" + "\n".join(logged.splitlines()[-10:]), file=sys.stderr)


def main() -> int:
    """Exit 0 when the goal is met, 1 when it is missed, 2 when the run itself failed."""
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="shop-bench-") as tmp:
        try:
            results = serve_and_measure(args, ensure_wrk(), Path(tmp))
        except (BenchFailed, subprocess.SubprocessError, OSError) as error:
            print(f"benchmark failed: {error}", file=sys.stderr)
            return 2
        ratio = report(args, results, usage_rows(Path(tmp)))
    return 0 if ratio >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())

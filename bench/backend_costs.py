"""Where a request's time goes on each backend: in-process wall and CPU time and statements per operation.

Complements bench/backends.py on a shared machine: per-operation timings taken in one process
(no wrk, no gunicorn), CPU time of this process, and the statements sent to the database (peewee's
query hook; on PostgreSQL also every statement the server logged for the throwaway database,
BEGIN and COMMIT included, with `log_statement=all` set on that database only). The same
operations on SQLite and PostgreSQL in one run:

- me: GET /api/v1/me (key lookup, token bucket);
- booking: GET the day's slots, then POST an appointment in the first free one;
- emit: one event emitted in a write transaction (event, delivery rows, the queued job);
- select1: `SELECT 1` through the app's database: the floor of one statement (a round trip on
  PostgreSQL), what every other line pays per round trip before any work of its own.

Columns: wall and CPU milliseconds of this process per operation, the CPU milliseconds the
PostgreSQL server processes of the database spent per operation (/proc, this machine only), the
statements peewee sent and those the server logged.

    python bench/backend_costs.py [--count 200]

Reads the PostgreSQL server log (/var/log/postgresql) for the statement counts where it can;
prints "-" where it cannot. Loopback only; bounded by --count.
"""

import sys
from pathlib import Path

# bench/platform.py would shadow the standard library's `platform` for everything imported here
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from urllib.parse import urlsplit  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OPERATIONS = ("me", "booking", "emit", "select1")
SERVER_LOGS = "/var/log/postgresql/postgresql-*-main.log"


def server_log_size() -> int:
    """The current end of the server's log (0 when it cannot be read)."""
    files = sorted(glob.glob(SERVER_LOGS))
    try:
        return os.path.getsize(files[-1]) if files else 0
    except OSError:
        return 0


def server_statements(database: str, offset: int) -> int | None:
    """Statements the server logged for `database` since `offset` (None when the log is unreadable)."""
    files = sorted(glob.glob(SERVER_LOGS))
    if not files:
        return None
    try:
        with open(files[-1], "rb") as handle:
            handle.seek(offset)
            text = handle.read().decode(errors="replace")
    except OSError:
        return None
    marks = (f"@{database} LOG:  statement:", f"@{database} LOG:  execute")
    return sum(1 for line in text.splitlines() if any(mark in line for mark in marks))


def backend_cpu_seconds(database: str) -> float:
    """CPU time (user and system) of the server processes connected to `database` so far."""
    import psycopg

    backends = load_module("backends")
    with psycopg.connect(backends.postgres_server(), autocommit=True, connect_timeout=5) as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (database,)).fetchall()
    pids = [pid for (pid,) in rows]
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # not on this machine, or already gone
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def run_child(operation: str, count: int) -> dict:
    """In a child process on SHOP_DATABASE: warm up, then time `count` operations."""
    from datetime import date, timedelta

    from shop import create_app
    from shop.db import db, run_sql, write_transaction
    from shop.domain.events.outbox import emit
    from shop.domain.fixtures import load_fixture

    backends = load_module("backends")
    app = create_app()
    fixture = backends.fixture(1)
    fixture["tenants"][0]["webhook_subscriptions"] = [
        {"url": "http://127.0.0.1:9/hook", "events": ["*"], "signing_secret": "whsec_" + "0" * 32}
    ]
    load_fixture(fixture)
    client = app.test_client()
    headers = {"Authorization": f"Bearer {backends.token(0)}"}
    day = [date.today() + timedelta(days=30)]

    def me() -> None:
        assert client.get("/api/v1/me", headers=headers).status_code == 200

    def booking() -> None:
        slot = backends.free_slot(client, day[0].isoformat())
        while slot is None:
            day[0] += timedelta(days=1)
            slot = backends.free_slot(client, day[0].isoformat())
        backends.book(client, 0, day[0].isoformat(), slot)

    def emit_one() -> None:
        with write_transaction():
            emit("bench0", "customer.updated", {"object": "customer", "id": "1"})

    def select1() -> None:
        run_sql("SELECT 1", {})

    run = {"me": me, "booking": booking, "emit": emit_one, "select1": select1}[operation]
    for _ in range(10):
        run()
    statements = [0]
    db.obj.query_hooks.append(lambda event: statements.__setitem__(0, statements[0] + 1))
    print("ready", flush=True)
    sys.stdin.readline()  # the parent noted the server log's end
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(count):
        run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "wall_ms": 1000 * wall / count,
        "cpu_ms": 1000 * cpu / count,
        "peewee_statements": statements[0] / count,
    }


def load_module(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"bench_{name}", Path(__file__).parent / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def one(operation: str, backend: str, count: int, folder: Path) -> dict:
    """One operation on a fresh database of the backend, in a child process."""
    backends = load_module("backends")
    database, drop = backends.new_database(backend, folder)
    name = urlsplit(database).path.lstrip("/")
    if backend == "postgres":
        backends.admin(f"ALTER DATABASE \"{name}\" SET log_statement = 'all'")
    env = {
        **os.environ,
        "SHOP_INSTANCE_PATH": str(folder),
        "SHOP_DATABASE": database,
        "SHOP_SECRET_KEY": "bench-secret",
        "SHOP_RATE_LIMIT_CAPACITY": backends.HUGE,
        "SHOP_RATE_LIMIT_REFILL": backends.HUGE,
        "SHOP_WEBHOOK_ALLOW_HTTP": "1",
        "SHOP_WEBHOOK_TRUSTED_NETWORKS": "127.0.0.0/8",
        "SHOP_LOG_LEVEL": "WARNING",
        "SHOP_DB_SYNCHRONOUS_COMMIT": os.environ.get("SHOP_DB_SYNCHRONOUS_COMMIT", "off"),
    }
    child = subprocess.Popen(
        [sys.executable, __file__, "--child", operation, "--count", str(count)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "ready", "the child did not get ready"
        offset = server_log_size()
        server_cpu = backend_cpu_seconds(name) if backend == "postgres" else 0.0
        child.stdin.write("go\n")
        child.stdin.flush()
        line = child.stdout.readline()  # the child waits with its connections open until told to end
        if not line.strip():
            raise SystemExit(f"{operation} on {backend} failed")
        figures = json.loads(line)
        if backend == "postgres":
            figures["server_cpu_ms"] = 1000 * (backend_cpu_seconds(name) - server_cpu) / count
        child.communicate("end\n", timeout=60)
        if backend == "postgres":
            time.sleep(0.2)  # the logger process writes behind
            logged = server_statements(name, offset)
            figures["server_statements"] = None if logged is None else logged / count
    finally:
        if child.poll() is None:
            child.kill()
        drop()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="operations timed per run (default 200)")
    parser.add_argument("--operations", nargs="+", choices=OPERATIONS, default=list(OPERATIONS))
    parser.add_argument("--child", choices=OPERATIONS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 10 <= args.count <= 2000:
        parser.error("keep it bounded: count 10-2000")
    if args.child:
        print(json.dumps(run_child(args.child, args.count)), flush=True)
        sys.stdin.readline()
        return 0
    folder = Path(tempfile.mkdtemp(prefix=f"shop-costs-{uuid.uuid4().hex[:6]}-"))
    heading = ("operation", "backend", "wall ms", "cpu ms", "server cpu", "statements", "on server")
    print("{:10s} {:9s} {:>8s} {:>7s} {:>10s} {:>10s} {:>9s}".format(*heading))
    for operation in args.operations:
        for backend in ("sqlite", "postgres"):
            f = one(operation, backend, args.count, folder)
            server = f.get("server_statements")
            print(
                f"{operation:10s} {backend:9s} {f['wall_ms']:8.2f} {f['cpu_ms']:7.2f} "
                f"{f.get('server_cpu_ms', 0):10.2f} {f['peewee_statements']:10.1f} "
                f"{'-' if server is None else f'{server:9.1f}':>9s}",
                flush=True,
            )
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"load average {load}; PostgreSQL at {load_module('backends').transport()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

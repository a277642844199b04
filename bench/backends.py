"""The same workloads on SQLite and on PostgreSQL on this machine, in one run: PostgreSQL / SQLite.

- platform: GET /api/v1/me under wrk against gunicorn (2 gthread workers of 4 threads), requests/s;
- booking: a booking flow through the app in-process (GET the day's slots, POST an appointment in
  the first free one), bookings/s;
- webhooks: events emitted in write transactions and delivered by one consumer (`python -m tasks`,
  4 threads) to an HTTP receiver in its own process, deliveries/s;
- writes: 8 writer processes creating appointments at once (a tenant and key each, so only the
  database's own locking is shared), creates/s of all eight.

Goals (issue 28, for one 2-core box): PostgreSQL keeps at least 0.6 of SQLite's rate on each of
the first three (one box: every statement is a round trip over a socket instead of a call into the
process), and at least 0.9 of SQLite's single writer on the 8 concurrent writers (both backends
CPU-bound on the same two cores: one box cannot show scale-out; docs/performance.md). Every
workload runs in fresh processes on a fresh database (a temporary SQLite file; a PostgreSQL
database created and dropped on the server of SHOP_BENCH_POSTGRES_URL, by default
postgresql://postgres@127.0.0.1:5432/test), the two backends alternating within each round; each
figure is the median of the rounds. Loopback only; bounded in count and time. Exits 0 when every
goal is met, 1 when one is missed, 2 when the run failed.

    python bench/backends.py --rounds 3
"""

import sys
from pathlib import Path

# (bench_result imports the standard library only, so it may come before bench/ leaves the path)
from bench_result import report_result

# bench/platform.py would shadow the standard library's `platform` for everything imported here
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from datetime import date, timedelta  # noqa: E402
from types import SimpleNamespace  # noqa: E402
from urllib.parse import urlsplit, urlunsplit  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BENCH = Path(__file__).resolve().parent
WORKLOADS = ("platform", "booking", "webhooks", "writes")
RATIO_GOAL = 0.6  # platform, booking, webhooks: PostgreSQL / SQLite at least this
WRITES_GOAL = 0.9  # 8 concurrent writers: PostgreSQL / SQLite at least this
WRITERS = 8
HUGE = "1000000000"  # a bucket that never refuses: we measure its cost, not its 429s
SCOPES = ["customers.read", "appointments.read", "appointments.write"]
EVERY_DAY = {day: [["08:00", "20:00"]] for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")}
BOOKING = {
    "enabled": True,
    "slot_minutes": 15,
    "capacity": 4,
    "max_days_ahead": 365,
    "min_notice_minutes": 0,
    "hours": EVERY_DAY,
    "closed_dates": [],
    "services": [],
    "techs": [],
}


def bench_module(name: str):
    """Another bench script as a module (bench/ is not a package; platform.py shadows a stdlib name)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def token(n: int) -> str:
    return f"sk_test_bench{n}_backends_0001"


def fixture(tenants: int) -> dict:
    """`tenants` shops that take bookings every day, each with one key."""
    return {
        "tenants": [
            {
                "id": f"bench{n}",
                "name": f"Bench {n}",
                "timezone": "UTC",
                "booking": BOOKING,
                "api_keys": [{"id": f"key_bench{n}", "token": token(n), "scopes": SCOPES}],
            }
            for n in range(tenants)
        ]
    }


# ---- the parent: databases, rounds, the report ----


SOCKET_DIR = "/var/run/postgresql"  # Debian's: where the server on this box listens besides TCP


def postgres_server() -> str:
    """SHOP_BENCH_POSTGRES_URL, else the server on this box: through its Unix socket where it has one
    (the one-box configuration docs/operations.md describes), else over TCP on 127.0.0.1."""
    if os.environ.get("SHOP_BENCH_POSTGRES_URL"):
        return os.environ["SHOP_BENCH_POSTGRES_URL"]
    if Path(SOCKET_DIR, ".s.PGSQL.5432").exists():
        return f"postgresql://postgres@/test?host={SOCKET_DIR}"
    return "postgresql://postgres@127.0.0.1:5432/test"


def with_database(url: str, name: str) -> str:
    """The same server's URL naming another database (the query, e.g. a socket's host, kept)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(postgres_server(), autocommit=True, connect_timeout=5) as conn:
        conn.execute(sql)


def new_database(backend: str, folder: Path) -> tuple[str, callable]:
    """A fresh database of the backend and how to drop it."""
    if backend == "sqlite":
        path = folder / f"{uuid.uuid4().hex[:8]}.sqlite3"
        return str(path), lambda: [
            Path(f"{path}{suffix}").unlink(missing_ok=True) for suffix in ("", "-wal", "-shm", ".lock")
        ]
    name = f"shop_bench_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin(f'CREATE DATABASE "{name}"')
    return with_database(postgres_server(), name), lambda: admin(f'DROP DATABASE "{name}" WITH (FORCE)')


def run_workload(workload: str, backend: str, folder: Path, args) -> dict:
    """One workload on a fresh database of the backend, in a process of its own; its figures."""
    database, drop = new_database(backend, folder)
    env = {
        **os.environ,
        "SHOP_INSTANCE_PATH": str(folder),
        "SHOP_DATABASE": database,
        "SHOP_SECRET_KEY": "bench-secret",
        "SHOP_RATE_LIMIT_CAPACITY": HUGE,
        "SHOP_RATE_LIMIT_REFILL": HUGE,
        "SHOP_WEBHOOK_ALLOW_HTTP": "1",
        "SHOP_WEBHOOK_TRUSTED_NETWORKS": "127.0.0.0/8",
        "SHOP_LOG_LEVEL": "WARNING",
        # both backends at the same durability: SQLite runs synchronous=NORMAL (a crash of the
        # machine may lose the last commits), which is PostgreSQL's synchronous_commit=off
        "SHOP_DB_SYNCHRONOUS_COMMIT": os.environ.get("SHOP_DB_SYNCHRONOUS_COMMIT", "off"),
    }
    command = [
        sys.executable,
        __file__,
        "--run",
        workload,
        "--count",
        str(args.count),
        "--duration",
        str(args.duration),
    ]
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    finally:
        drop()
    if done.returncode != 0:
        raise RuntimeError(f"{workload} on {backend} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def transport() -> str:
    """How the bench reaches PostgreSQL: the Unix socket's directory or host:port."""
    parts = urlsplit(postgres_server())
    socket = dict(pair.split("=", 1) for pair in parts.query.split("&") if "=" in pair).get("host")
    return f"Unix socket {socket}" if socket else f"TCP {parts.hostname}:{parts.port or 5432}"


def report(figures: dict) -> bool:
    """Print each workload's median per backend and the ratio against its goal; True when all met."""
    print(f"\n{'workload':10s} {'sqlite':>10s} {'postgres':>10s} {'pg/sqlite':>10s}  goal")
    all_met = True
    for workload in WORKLOADS:
        sqlite = statistics.median(run["rate"] for run in figures[workload]["sqlite"])
        postgres = statistics.median(run["rate"] for run in figures[workload]["postgres"])
        ratio = postgres / sqlite
        goal = WRITES_GOAL if workload == "writes" else RATIO_GOAL
        met = ratio >= goal
        unit = figures[workload]["sqlite"][0]["unit"]
        report_result(f"{workload}: PostgreSQL against SQLite", postgres, sqlite, unit, goal, at_least=True)
        all_met &= met
        sign = ">="
        print(
            f"{workload:10s} {sqlite:10.1f} {postgres:10.1f} {ratio:10.3f}  {sign} {goal} "
            f"{'met' if met else 'MISSED'}  ({figures[workload]['sqlite'][0]['unit']})"
        )
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores, load average {load}; PostgreSQL at {transport()}")
    return all_met


def main_parent(args) -> int:
    figures = {workload: {"sqlite": [], "postgres": []} for workload in WORKLOADS}
    folder = Path(tempfile.mkdtemp(prefix="shop-bench-backends-"))
    started = time.monotonic()
    try:
        admin("SELECT 1")
        for round_number in range(1, args.rounds + 1):
            for workload in args.workloads:
                order = ("sqlite", "postgres") if round_number % 2 else ("postgres", "sqlite")
                for backend in order:
                    run = run_workload(workload, backend, folder, args)
                    figures[workload][backend].append(run)
                    print(
                        f"round {round_number} {workload:9s} {backend:8s} {run['rate']:9.1f} {run['unit']}"
                        f"  {run.get('detail', '')}",
                        flush=True,
                    )
    except Exception as error:  # noqa: BLE001  (the run failed: say why, exit 2)
        print(f"benchmark failed: {error}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{args.rounds} rounds in {time.monotonic() - started:.0f} s")
    if set(args.workloads) != set(WORKLOADS):
        return 0
    return 0 if report(figures) else 1


# ---- the workloads, each in a process of its own on the database of SHOP_DATABASE ----


def setup_app(tenants: int):
    from shop import create_app
    from shop.domain.fixtures import load_fixture

    app = create_app()
    load_fixture(fixture(tenants))
    return app


def platform(args) -> dict:
    """GET /me under wrk against gunicorn with 2 gthread workers of 4 threads (the service's
    defaults, what this workload has run since gunicorn.conf.py set them): requests/s (a bounded
    wrk run)."""
    bench_platform = bench_module("platform")
    setup_app(1)
    from shop.platform import usage_log

    usage_log.buffer.flush()
    wrk = bench_platform.ensure_wrk()
    port = bench_platform.free_port()
    folder = Path(os.environ["SHOP_INSTANCE_PATH"])
    log = folder / f"gunicorn-{port}.log"
    options = SimpleNamespace(
        worker_class="gthread", worker_threads=4, threads=2, connections=32, duration=args.duration
    )
    server = bench_platform.start_gunicorn(options, port, dict(os.environ), log)
    try:
        base = f"http://127.0.0.1:{port}/api/v1"
        bench_platform.wait_for_health(base, server)
        bench_platform.run_wrk(
            wrk, SimpleNamespace(**{**vars(options), "duration": 1}), f"{base}/me", token(0)
        )
        run = bench_platform.run_wrk(wrk, options, f"{base}/me", token(0))
    finally:
        server.terminate()
        server.wait(timeout=30)
    if run["problems"]:
        raise SystemExit(f"invalid wrk run: {run['problems']}")
    return {"rate": run["rps"], "unit": "req/s", "detail": f"{run['requests']} requests"}


def free_slot(client, day: str) -> str | None:
    """The first slot of the day with a place left, as a client would pick it."""
    url = f"/api/v1/appointments/slots?date={day}&limit=100"
    response = client.get(url, headers={"Authorization": f"Bearer {token(0)}"})
    assert response.status_code == 200, response.get_data(as_text=True)
    return next((slot["time"] for slot in response.get_json()["data"] if slot["available"]), None)


def book(client, n: int, day: str, time_of_day: str) -> None:
    body = {
        "customer_name": f"Customer {n}",
        "customer_phone": "+15555550100",
        "scheduled_date": day,
        "scheduled_time": time_of_day,
    }
    response = client.post("/api/v1/appointments", json=body, headers={"Authorization": f"Bearer {token(n)}"})
    assert response.status_code == 201, response.get_data(as_text=True)


def booking(args) -> dict:
    """GET the slots of a day then book the first free one, `count` times in a row: bookings/s."""
    client = setup_app(1).test_client()
    day = date.today() + timedelta(days=30)

    def book_next() -> None:
        nonlocal day
        slot = free_slot(client, day.isoformat())
        while slot is None:  # the day is full: the next one
            day += timedelta(days=1)
            slot = free_slot(client, day.isoformat())
        book(client, 0, day.isoformat(), slot)

    for _ in range(5):  # warm-up
        book_next()
    started = time.perf_counter()
    for _ in range(args.count):
        book_next()
    seconds = time.perf_counter() - started
    return {"rate": args.count / seconds, "unit": "bookings/s", "detail": f"{args.count} bookings"}


def webhooks(args) -> dict:
    """bench/webhooks.py's pipeline: emitted events to the receiver's 2xx through one consumer."""
    import requests

    bench_webhooks = bench_module("webhooks")
    port = bench_webhooks.free_port()
    receiver = subprocess.Popen([sys.executable, str(BENCH / "webhooks.py"), "--serve", str(port)])
    try:
        session = requests.Session()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                bench_webhooks.received(session, port)
                break
            except requests.RequestException:
                time.sleep(0.05)
        bench_webhooks.set_up_shop(port)
        rate = bench_webhooks.pipeline(session, port, args.count, 120, dict(os.environ), {})
    finally:
        receiver.terminate()
        receiver.wait(timeout=10)
    return {"rate": rate, "unit": "deliveries/s", "detail": f"{args.count} events"}


def writes(args) -> dict:
    """8 writer processes creating appointments at once, each for its own tenant: creates/s of all."""
    setup_app(WRITERS)
    folder = Path(os.environ["SHOP_INSTANCE_PATH"]) / f"writers-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    per_writer = max(args.count // 4, 10)  # twice the others: the figure needs a few seconds to settle
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--writer",
                str(n),
                "--count",
                str(per_writer),
                "--signals",
                str(folder),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(WRITERS)
    ]
    deadline = time.monotonic() + 120
    while len(list(folder.glob("ready-*"))) < WRITERS:  # every writer has its app and connection
        if time.monotonic() > deadline or any(proc.poll() is not None for proc in procs):
            raise SystemExit("the writers did not all get ready")
        time.sleep(0.05)
    started = time.time()
    (folder / "go").touch()
    ends = []
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        if proc.returncode != 0:
            raise SystemExit(f"a writer failed with {proc.returncode}")
        ends.append(float(out.strip().splitlines()[-1]))
    return {
        "rate": WRITERS * per_writer / (max(ends) - started),
        "unit": "creates/s",
        "detail": f"{WRITERS} writers x {per_writer} creates",
    }


def writer(n: int, count: int, signals: Path) -> None:
    """One of the concurrent writers: `count` creates for tenant n once told to go; prints its end."""
    from shop import create_app

    client = create_app().test_client()
    day = date.today() + timedelta(days=1)
    slots = [f"{hour:02d}:{minute:02d}" for hour in range(8, 20) for minute in (0, 15, 30, 45)]
    client.get("/api/v1/me", headers={"Authorization": f"Bearer {token(n)}"})  # connect before the start
    (signals / f"ready-{n}").touch()
    while not (signals / "go").exists():
        time.sleep(0.001)
    for i in range(count):  # four places a slot: a slot a create, a new day every 48 creates
        book(client, n, (day + timedelta(days=i // len(slots))).isoformat(), slots[i % len(slots)])
    print(time.time())


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds; each figure is their median (default 3)"
    )
    parser.add_argument(
        "--count", type=int, default=400, help="bookings, events and creates per workload run (default 400)"
    )
    parser.add_argument("--duration", type=int, default=5, help="seconds of wrk per platform run (default 5)")
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    parser.add_argument("--run", choices=WORKLOADS, help=argparse.SUPPRESS)  # internal: one workload
    parser.add_argument("--writer", type=int, help=argparse.SUPPRESS)  # internal: one concurrent writer
    parser.add_argument("--signals", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not (1 <= args.rounds <= 7 and 10 <= args.count <= 2000 and 1 <= args.duration <= 30):
        parser.error("keep it bounded: rounds 1-7, count 10-2000, duration 1-30 s")
    return args


def main() -> int:
    args = parse_args()
    if args.writer is not None:
        writer(args.writer, args.count, args.signals)
        return 0
    if args.run:
        print(json.dumps(globals()[args.run](args)))
        return 0
    return main_parent(args)


if __name__ == "__main__":
    sys.exit(main())

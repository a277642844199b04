"""The records' API under growth, as named workloads (run one with --workload, or all).

- ticket_list: the first page of GET /api/v1/tickets (and one filtered by status) with 100,000
  tickets against 1,000 (goal: ratio <= 1.2 for both). 10% of the tickets are hidden or deleted,
  so the query must skip them; GET /api/v1/me is measured beside them as the fixed cost of a request.

Each size of a workload runs in its own process on its own temporary SQLite file (WAL), through the
real app (auth, rate limit, usage log, the view, the query) with the Flask test client: no network.
Both sizes are measured in alternating batches, so they share the machine's background load; each
figure is the median of its batch medians. The run is bounded in rows, requests and seconds.

A workload is a Workload in WORKLOADS: a fill(rows) that builds one size, the named GET/POST
requests it times, and the names its goal is checked on.
"""

import argparse
import gc
import json
import logging
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "sk_test_bench_records_0001"
SCOPES = ["customers.read", "customers.write", "tickets.read", "tickets.write", "leads.read", "leads.write"]


@dataclass(frozen=True)
class Request:
    """One timed request: method, path (query included) and JSON body (None for a GET)."""

    method: str
    path: str
    body: dict | None = None


@dataclass(frozen=True)
class Workload:
    """What a workload fills, what it times, and which of those its goal bounds (large / small)."""

    description: str
    fill: Callable[[int], None]
    requests: dict[str, Request]
    goal_names: tuple[str, ...]
    goal: float
    scopes: list[str] = field(default_factory=lambda: list(SCOPES))


def bench_tenant(scopes: list[str]) -> dict:
    key = {"id": "key_bench", "token": TOKEN, "scopes": scopes}
    return {
        "id": "bench",
        "name": "Bench",
        "api_keys": [key],
        "users": [{"id": 7, "email": "sam@bench.test"}],
    }


# ---- ticket_list --------------------------------------------------------------------------------

STATUSES = ("New", "In Progress", "Waiting for Parts", "Ready", "Resolved")


def fill_tickets(rows: int) -> None:
    """`rows` tickets of one shop over rows // 100 customers, a second apart; 5% hidden, 5% deleted."""
    from shop.db import db
    from shop.domain.fixtures import load_fixture
    from shop.models import Customer, Ticket

    customers = max(10, rows // 100)
    load_fixture(
        {
            "tenants": [
                {
                    **bench_tenant(SCOPES),
                    "customers": [
                        {"id": i, "display_name": f"Customer {i}"} for i in range(1, customers + 1)
                    ],
                }
            ]
        }
    )
    rng, start = random.Random(7), datetime(2026, 1, 1)
    fields = [Ticket.tenant, Ticket.customer, Ticket.subject, Ticket.status, Ticket.hidden, Ticket.deleted]
    fields.append(Ticket.created_at)
    with db.atomic():
        batch = []
        for i in range(rows):
            draw = rng.random()
            batch.append(
                (
                    "bench",
                    rng.randint(1, customers),
                    f"Ticket {i}",
                    rng.choice(STATUSES),
                    draw < 0.05,
                    0.05 <= draw < 0.10,
                    start + timedelta(seconds=i),
                )
            )
            if len(batch) == 500:
                Ticket.insert_many(batch, fields=fields).execute()
                batch = []
        if batch:
            Ticket.insert_many(batch, fields=fields).execute()
    assert Ticket.select().count() == rows and Customer.select().count() == customers
    db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")


TICKET_LIST = Workload(
    description="first page of the ticket list (and by status) at --large tickets against --small",
    fill=fill_tickets,
    requests={
        "page": Request("GET", "/api/v1/tickets"),
        "status": Request("GET", "/api/v1/tickets?status=Waiting%20for%20Parts"),
        "me": Request("GET", "/api/v1/me"),
    },
    goal_names=("page", "status"),
    goal=1.2,
)

WORKLOADS: dict[str, Workload] = {"ticket_list": TICKET_LIST}


# ---- the harness every workload shares ----------------------------------------------------------


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), action="append", help="default: all")
    parser.add_argument("--small", type=int, default=1_000, help="baseline rows (default 1,000)")
    parser.add_argument("--large", type=int, default=100_000, help="measured rows (default 100,000)")
    parser.add_argument("--requests", type=int, default=40, help="requests per batch (default 40)")
    parser.add_argument("--rounds", type=int, default=15, help="batches per request and size (default 15)")
    parser.add_argument("--max-seconds", type=int, default=600, help="give up after this long (default 600)")
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "ROWS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not (
        1 <= args.small <= args.large <= 1_000_000
        and 5 <= args.requests <= 1_000
        and 1 <= args.rounds <= 50
        and 10 <= args.max_seconds <= 3_600
    ):
        parser.error(
            "keep it bounded: 1 <= small <= large <= 1,000,000 rows, 5..1,000 requests a batch, "
            "1..50 rounds, 10..3,600 seconds"
        )
    return args


def timed(client, request: Request, headers: dict, count: int) -> tuple[float, object]:
    """Median milliseconds of `count` requests and the last body."""
    times = []
    for _ in range(count):
        began = time.perf_counter()
        response = client.open(request.path, method=request.method, json=request.body, headers=headers)
        times.append((time.perf_counter() - began) * 1000)
        if response.status_code >= 300:
            raise SystemExit(
                f"{request.method} {request.path}: {response.status_code} {response.get_data(True)}"
            )
    return statistics.median(times), response.get_json()


def child(name: str, rows: int) -> None:
    """Fill one size, then answer `REQUEST COUNT` lines from the parent with a batch's median (JSON)."""
    from shop import create_app

    workload = WORKLOADS[name]
    logging.getLogger("shop.request").setLevel(logging.WARNING)  # a line per request: noise here
    app = create_app({"TESTING": False, "RATE_LIMIT_CAPACITY": 10**9, "RATE_LIMIT_REFILL": 10**9})
    with app.app_context():
        workload.fill(rows)
    # what filling left on the heap must not make the garbage collector's passes cost more in one size
    gc.collect()
    gc.freeze()
    client, headers = app.test_client(), {"Authorization": f"Bearer {TOKEN}"}
    for request in workload.requests.values():  # warm the caches
        timed(client, request, headers, 20)
    print("ready", flush=True)
    while line := sys.stdin.readline():
        request_name, count = line.split()
        median, body = timed(client, workload.requests[request_name], headers, int(count))
        found = len(body["data"]) if isinstance(body, dict) and "data" in body else 1
        print(json.dumps({"median": median, "found": found}), flush=True)


class Child:
    """One size in its own process on its own temporary database file, kept alive between batches."""

    def __init__(self, name: str, rows: int):
        self.folder = tempfile.TemporaryDirectory(prefix="bench-records-")
        env = {
            **os.environ,
            "SHOP_INSTANCE_PATH": self.folder.name,
            "SHOP_SECRET_KEY": "bench-secret",
            "SHOP_DATABASE": str(Path(self.folder.name) / "shop.sqlite3"),
            "PYTHONPATH": str(ROOT),
        }
        # -P: bench/ must not shadow the standard library (bench/platform.py would hide `platform`)
        command = [sys.executable, "-P", __file__, "--child", name, str(rows)]
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        if self.process.stdout.readline().strip() != "ready":
            self.close()
            raise SystemExit(f"child {name} {rows} failed to start")

    def batch(self, request_name: str, count: int) -> dict:
        self.process.stdin.write(f"{request_name} {count}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit("a child died mid-run")
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.folder.cleanup()


def measure(args, name: str, deadline: float) -> dict:
    """Both sizes of a workload, in alternating batches, until the rounds are done or time is up."""
    workload = WORKLOADS[name]
    children = {rows: Child(name, rows) for rows in (args.small, args.large)}
    medians = {(rows, request): [] for rows in children for request in workload.requests}
    found, rounds = {}, 0
    try:
        while rounds < args.rounds and time.monotonic() < deadline:
            for request in workload.requests:
                for rows, process in children.items():
                    result = process.batch(request, args.requests)
                    medians[rows, request].append(result["median"])
                    found[rows, request] = result["found"]
            rounds += 1
    finally:
        for process in children.values():
            process.close()
    return {key: statistics.median(values) for key, values in medians.items()} | {
        "found": found,
        "rounds": rounds,
    }


def report(args, name: str, figures: dict) -> bool:
    """Print one workload's table; whether its goal is met."""
    from bench_result import report_result  # the parent's (a --child runs with -P: no bench/ on its path)

    workload, met = WORKLOADS[name], True
    print(f"\n{name}: {workload.description}")
    print(f"ms: median of {figures['rounds']} alternating batches of {args.requests} requests")
    print(f"{'':>8} {args.small:>10,} {args.large:>10,}  ratio  rows")
    for request in workload.requests:
        small, large = figures[args.small, request], figures[args.large, request]
        rows = f"{figures['found'][args.small, request]}/{figures['found'][args.large, request]}"
        print(f"{request:>8} {small:>10.3f} {large:>10.3f}  {large / small:5.2f}  {rows}")
        if request in workload.goal_names:
            label = f"{name} {request}, {args.large:,} against {args.small:,}"
            met = report_result(label, large, small, "ms", workload.goal, at_least=False) and met
    print(f"goal ({', '.join(workload.goal_names)} ratio <= {workload.goal}): {'met' if met else 'MISSED'}")
    return met


def main() -> int:
    args = parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return 0
    deadline = time.monotonic() + args.max_seconds
    print(f"load average before: {Path('/proc/loadavg').read_text().split()[:3]}")
    met = True
    for name in args.workload or sorted(WORKLOADS):
        figures = measure(args, name, deadline)
        met = report(args, name, figures) and met
    print(f"\nload average after: {Path('/proc/loadavg').read_text().split()[:3]}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

"""Latency of the unread count and the first inbox page with 100,000 notifications against 1,000.

Each size runs in its own process on its own temporary SQLite file (WAL), through the real app
(auth, rate limit, usage log, the view, the query), with the Flask test client: no network at all.
30% of the notifications are tied to hidden tickets, so every query must skip them.

Two inboxes are measured at each size:
- triaged (the goal): the newest 1,000 notifications are active, of which the newest 200 are
  unread; everything older has been read and archived, as a shop that uses archive-read looks.
  The table grows 100x, the active inbox does not: the latency must not grow (goal: ratio <= 1.5).
- untriaged (reported, no goal): every notification is unread and active. The count is exact, so
  it reads every unread row's index entry and checks its ticket; it grows with the unread rows.
"""

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "sk_test_bench_notifications_01"
GOAL = 1.5
HIDDEN_SHARE = 0.3
ACTIVE, UNREAD = 1_000, 200


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1_000, help="baseline rows (default 1,000)")
    parser.add_argument("--large", type=int, default=100_000, help="measured rows (default 100,000)")
    parser.add_argument("--requests", type=int, default=40, help="requests per batch (default 40)")
    parser.add_argument("--rounds", type=int, default=15, help="batches per endpoint and size (default 15)")
    parser.add_argument("--child", nargs=2, metavar=("ROWS", "INBOX"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not (
        1 <= args.small <= args.large <= 1_000_000 and 5 <= args.requests <= 1_000 and 1 <= args.rounds <= 50
    ):
        parser.error(
            "keep it bounded: 1 <= small <= large <= 1,000,000 rows, 5..1,000 requests a batch, 1..50 rounds"
        )
    return args


def fill(rows: int, inbox: str) -> None:
    """One tenant with `rows` notifications, 30% of them tied to hidden tickets, 10% to no ticket."""
    from shop.db import db
    from shop.domain.fixtures import load_fixture
    from shop.models import Notification, Ticket

    tickets = max(10, rows // 10)
    hidden = {i for i in range(1, tickets + 1) if i % 10 < 3}
    key = {"id": "key_bench", "token": TOKEN, "scopes": ["notifications.read"]}
    ticket_rows = [{"id": str(i), "hidden": i in hidden} for i in range(1, tickets + 1)]
    load_fixture({"tenants": [{"id": "bench", "name": "Bench", "api_keys": [key], "tickets": ticket_rows}]})
    visible = [i for i in range(1, tickets + 1) if i not in hidden]
    hidden_list, rng, start = sorted(hidden), random.Random(7), datetime(2026, 1, 1)
    fields = [
        Notification.tenant,
        Notification.scope,
        Notification.ticket,
        Notification.type,
        Notification.message,
        Notification.read,
        Notification.archived,
        Notification.archived_at,
        Notification.created_at,
    ]
    batch = []
    with db.atomic():
        for i in range(rows):
            draw = rng.random()
            ticket = (
                rng.choice(hidden_list)
                if draw < HIDDEN_SHARE
                else (None if draw < HIDDEN_SHARE + 0.1 else rng.choice(visible))
            )
            age = rows - 1 - i  # 0 is the newest row
            archived = inbox == "triaged" and age >= ACTIVE
            read = archived or (inbox == "triaged" and age >= UNREAD)
            created = start + timedelta(seconds=i)
            batch.append(
                (
                    "bench",
                    "global",
                    ticket,
                    "new_ticket",
                    f"Notification {i}",
                    read,
                    archived,
                    created if archived else None,
                    created,
                )
            )
            if len(batch) == 500:
                Notification.insert_many(batch, fields=fields).execute()
                batch = []
        if batch:
            Notification.insert_many(batch, fields=fields).execute()
    assert Notification.select().count() == rows and Ticket.select().count() == tickets
    db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")


PATHS = {"count": "/api/v1/notifications/count", "page": "/api/v1/notifications", "me": "/api/v1/me"}


def timed(client, path: str, headers: dict, requests: int) -> tuple[float, dict]:
    """Median milliseconds of `requests` GETs and the last body."""
    times = []
    for _ in range(requests):
        began = time.perf_counter()
        response = client.get(path, headers=headers)
        times.append((time.perf_counter() - began) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"{path}: {response.status_code} {response.get_data(as_text=True)}")
    return statistics.median(times), response.get_json()


def child(rows: int, inbox: str) -> None:
    """Fill one size, then answer `NAME REQUESTS` lines from the parent with a batch's median (JSON)."""
    from shop import create_app

    app = create_app({"TESTING": False, "RATE_LIMIT_CAPACITY": 10**9, "RATE_LIMIT_REFILL": 10**9})
    with app.app_context():
        fill(rows, inbox)
    # what filling left on the heap must not make the garbage collector's passes cost more in one size
    gc.collect()
    gc.freeze()
    client, headers = app.test_client(), {"Authorization": f"Bearer {TOKEN}"}
    for path in PATHS.values():  # warm the caches
        timed(client, path, headers, 20)
    print("ready", flush=True)
    while line := sys.stdin.readline():
        name, requests = line.split()
        median, body = timed(client, PATHS[name], headers, int(requests))
        found = body.get("unread", len(body.get("data", [])))
        print(json.dumps({"median": median, "found": found}), flush=True)


class Child:
    """One size in its own process on its own temporary database file, kept alive between batches."""

    def __init__(self, rows: int, inbox: str):
        self.folder = tempfile.TemporaryDirectory(prefix="bench-notifications-")
        env = {
            **os.environ,
            "SHOP_INSTANCE_PATH": self.folder.name,
            "SHOP_SECRET_KEY": "bench-secret",
            "SHOP_DATABASE": str(Path(self.folder.name) / "shop.sqlite3"),
            "PYTHONPATH": str(ROOT),
        }
        # -P: bench/ must not shadow the standard library (bench/platform.py would hide `platform`)
        command = [sys.executable, "-P", __file__, "--child", str(rows), inbox]
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        if self.process.stdout.readline().strip() != "ready":
            self.close()
            raise SystemExit(f"child {rows} {inbox} failed to start")

    def batch(self, name: str, requests: int) -> dict:
        self.process.stdin.write(f"{name} {requests}\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit("a child died mid-run")
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.folder.cleanup()


def measure(args, inbox: str) -> dict:
    """Both sizes side by side, measured in alternating batches so that they share the machine's
    background load; each figure is the median of its batch medians."""
    children = {rows: Child(rows, inbox) for rows in (args.small, args.large)}
    medians = {(rows, name): [] for rows in children for name in PATHS}
    found = {}
    try:
        for _ in range(args.rounds):
            for name in PATHS:
                for rows, process in children.items():
                    result = process.batch(name, args.requests)
                    medians[rows, name].append(result["median"])
                    found[rows, name] = result["found"]
    finally:
        for process in children.values():
            process.close()
    return {key: statistics.median(values) for key, values in medians.items()} | {"found": found}


def main() -> int:
    args = parse_args()
    if args.child:
        child(int(args.child[0]), args.child[1])
        return 0
    from bench_result import report_result  # the parent's (a --child runs with -P: no bench/ on its path)

    print(f"load average before: {Path('/proc/loadavg').read_text().split()[:3]}")
    met = True
    for inbox in ("triaged", "untriaged"):
        figures = measure(args, inbox)
        print(
            f"\n{inbox} inbox ({'goal' if inbox == 'triaged' else 'no goal'}), ms: median of {args.rounds} "
            f"alternating batches of {args.requests} requests"
        )
        print(f"{'':>8} {args.small:>10,} {args.large:>10,}  ratio")
        for name in PATHS:
            small, large = figures[args.small, name], figures[args.large, name]
            print(f"{name:>8} {small:>10.3f} {large:>10.3f}  {large / small:.2f}")
            if inbox == "triaged" and name != "me":
                workload = f"notifications {name}, {args.large:,} against {args.small:,}"
                met = report_result(workload, large, small, "ms", GOAL, at_least=False) and met
        found = figures["found"]
        print(
            f"unread counted: {found[args.small, 'count']:,} / {found[args.large, 'count']:,}; "
            f"page rows: {found[args.small, 'page']} / {found[args.large, 'page']}"
        )
    print(f"\nload average after: {Path('/proc/loadavg').read_text().split()[:3]}")
    print(f"goal (triaged count and page ratio <= {GOAL}): {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

"""A calendar feed of 2,000 appointments served fresh and as 304 (If-None-Match), over loopback HTTP.

The feed is GET /calendar/<token>.ics of a shop with 2,000 appointments in the feed's window (30 days
back to 60 ahead), served by the real app under werkzeug's server on 127.0.0.1 (a free port, one
thread) to one requests.Session on the same machine; nothing leaves the box.

- fresh: the whole calendar built with icalendar (the process's body cache emptied before each);
- 200 from the body cache: what a client polling without If-None-Match gets while nothing changed;
- 304: the feed and one narrow index range of the window (id, sequence, updated_at, cancelled_at)
  read for the ETag, no body.

Bounded: a fixed number of requests of each kind, taken in turns so load changes hit all alike.
The baseline of the same run is the bare GET /api/v1/health on the same server.

    python bench/calendar_feed.py          # exits 0 when the 304 is at least 5x the fresh rate
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from datetime import date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the script's own folder holds bench/platform.py, which would shadow the standard `platform` module
from bench_result import report_result  # noqa: E402  (before bench/ leaves the path)

sys.path[0] = str(ROOT)
FOLDER = tempfile.mkdtemp(prefix="shop-bench-feed-")
os.environ.update(
    SHOP_INSTANCE_PATH=FOLDER,
    SHOP_DATABASE=os.path.join(FOLDER, "shop.sqlite3"),
    SHOP_SECRET_KEY="bench-secret",
    SHOP_USAGE_READ_SAMPLE_RATE="0",
)

import icalendar  # noqa: E402
import requests  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402

from shop import clock, create_app  # noqa: E402
from shop.db import db, write_transaction  # noqa: E402
from shop.domain import actor  # noqa: E402
from shop.domain.appointments import feeds, ics  # noqa: E402
from shop.domain.fixtures import load_fixture  # noqa: E402

GOAL = 5.0
NOW = "2026-11-25T12:00:00"
TODAY = date(2026, 11, 25)
STATUSES = ("scheduled", "pending", "confirmed", "checked_in", "completed", "no_show", "cancelled")
TECHS = ["alex", "bo", "cy", None]


def shop() -> None:
    load_fixture(
        {
            "tenants": [
                {
                    "id": "busy",
                    "name": "Busy Repairs",
                    "timezone": "America/New_York",
                    "booking": {"enabled": True, "max_days_ahead": 60, "techs": [{"id": "alex"}]},
                }
            ]
        }
    )


def bulk_insert(count: int, seed: int = 1) -> None:
    """`count` appointments spread over the feed's window, in one transaction."""
    rng = random.Random(seed)
    created = clock.now().isoformat(sep=" ")
    columns = (
        "tenant_id",
        "customer_name",
        "customer_phone",
        "customer_email",
        "service_description",
        "scheduled_date",
        "scheduled_time",
        "duration_minutes",
        "status",
        "tech_id",
        "created_at",
        "sequence",
    )
    sql = f"INSERT INTO appointment ({', '.join(columns)}) VALUES ({', '.join([db.param] * len(columns))})"
    rows = [
        (
            "busy",
            f"Customer {n}",
            "+15555550100",
            f"c{n}@example.com",
            rng.choice(("Screen repair", "Battery", "Water damage, diagnostics")),
            (TODAY + timedelta(days=rng.randrange(-30, 61))).isoformat(),
            f"{rng.randrange(8, 18):02d}:{rng.choice((0, 15, 30, 45)):02d}",
            rng.choice((15, 30, 45, 60, 90)),
            rng.choice(STATUSES),
            rng.choice(TECHS),
            created,
            rng.randrange(0, 4),
        )
        for n in range(count)
    ]
    with write_transaction():
        db.cursor().executemany(sql, rows)


def serve(app):
    """The app on a free loopback port in a background thread; returns (server, base url)."""
    server = make_server("127.0.0.1", 0, app, threaded=False)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


def timed(session, url: str, headers: dict, expected: int) -> float:
    started = time.perf_counter()
    response = session.get(url, headers=headers, timeout=30)
    elapsed = time.perf_counter() - started
    if response.status_code != expected:
        raise SystemExit(f"{url}: {response.status_code}, expected {expected}: {response.text[:300]}")
    return elapsed


def measure(session, calls: list[tuple]) -> list[float]:
    """Median seconds of each (url, headers, status, repeats, before) call, taken in turns after a
    warm-up; `before` (untimed) runs ahead of each request of its kind."""
    samples = [[] for _ in calls]
    for url, headers, status, _, before in calls:
        before()
        timed(session, url, headers, status)
    rounds = max(call[3] for call in calls)
    for i in range(rounds):
        for (url, headers, status, repeats, before), bucket in zip(calls, samples, strict=True):
            if i < repeats:
                before()
                bucket.append(timed(session, url, headers, status))
    return [statistics.median(bucket) for bucket in samples]


def nothing() -> None:
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appointments", type=int, default=2000, help="in the feed's window (default 2,000)")
    parser.add_argument("--fresh", type=int, default=20, help="fresh requests timed (default 20)")
    parser.add_argument("--cached", type=int, default=300, help="304 requests timed (default 300)")
    args = parser.parse_args()
    if not (100 <= args.appointments <= 20_000 and 5 <= args.fresh <= 200 and 20 <= args.cached <= 5000):
        parser.error("keep it bounded: appointments 100-20,000, fresh 5-200, cached 20-5,000")
    app = create_app()
    clock.advance((datetime.fromisoformat(NOW) - clock.now()).total_seconds())
    shop()
    bulk_insert(args.appointments)
    server, base = serve(app)
    try:
        with app.app_context():
            feed = feeds.create_feed("busy", {}, actor.SYSTEM, base)
        session = requests.Session()
        first = session.get(feed.url, timeout=60)
        first.raise_for_status()
        events = len(icalendar.Calendar.from_ical(first.content).walk("VEVENT"))
        assert events == args.appointments, f"{events} events in the feed"
        etag = first.headers["ETag"]
        print(f"load average before: {os.getloadavg()[0]:.2f}")
        health, fresh, kept, cached = measure(
            session,
            [
                (f"{base}/api/v1/health", {}, 200, args.cached, nothing),
                # the process's body cache emptied first: the whole calendar is built
                (feed.url, {}, 200, args.fresh, ics.bodies.clear),
                (feed.url, {}, 200, args.fresh, nothing),  # a poll without If-None-Match (Google's)
                (feed.url, {"If-None-Match": etag}, 304, args.cached, nothing),
            ],
        )
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        server.shutdown()
    print(f"{'events in the feed':32s} {events:10d}")
    print(f"{'body bytes':32s} {len(first.content):10d}")
    print(f"{'health (baseline) ms':32s} {health * 1000:10.2f}")
    print(f"{'fresh feed ms':32s} {fresh * 1000:10.2f}   ({1 / fresh:8.1f} /s)")
    print(f"{'200 from the body cache ms':32s} {kept * 1000:10.2f}   ({1 / kept:8.1f} /s)")
    print(f"{'304 feed ms':32s} {cached * 1000:10.2f}   ({1 / cached:8.1f} /s)")
    print(f"{'fresh / health':32s} {fresh / health:10.1f}")
    print(f"{'304 / health':32s} {cached / health:10.1f}")
    ratio = fresh / cached
    report_result(
        "calendar feed: 304 against a fresh build", 1 / cached, 1 / fresh, "req/s", GOAL, at_least=True
    )
    print(f"304 rate / fresh rate {ratio:.1f} (goal >= {GOAL}) {'met' if ratio >= GOAL else 'MISSED'}")
    return 0 if ratio >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())

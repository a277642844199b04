"""Slot computation on a busy week against an empty calendar, and keyset list pages at 1,000 vs 200,000.

The busy week holds 2,000 appointments (services with buffers among them) and 500 live slot holds;
the slot list is also timed with explain=true against the plain list on that busy day.

Runs in-process through the real app (Flask test client: authentication, rate limit, parsing, the
domain code and the JSON dump, on a temporary SQLite file in WAL mode); no network. Each figure is
the median of a bounded number of calls, and each ratio compares two runs of this same process.

    python bench/slots.py            # exits 0 when both goals are met, 1 otherwise
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the script's own folder holds bench/platform.py, which would shadow the standard `platform` module
from bench_result import report_result  # noqa: E402  (before bench/ leaves the path)

sys.path[0] = str(ROOT)
FOLDER = tempfile.mkdtemp(prefix="shop-bench-slots-")
os.environ.update(
    SHOP_INSTANCE_PATH=FOLDER,
    SHOP_DATABASE=os.path.join(FOLDER, "shop.sqlite3"),
    SHOP_SECRET_KEY="bench-secret",
    SHOP_RATE_LIMIT_CAPACITY="1000000000",
    SHOP_RATE_LIMIT_REFILL="1000000000",
    SHOP_USAGE_READ_SAMPLE_RATE="0",
)


from shop import clock, create_app  # noqa: E402
from shop.db import db, write_transaction  # noqa: E402
from shop.domain.appointments.slots import list_slots  # noqa: E402
from shop.domain.fixtures import load_fixture  # noqa: E402
from shop.models import Appointment, SlotHold  # noqa: E402

SLOT_GOAL = 2.0
LIST_GOAL = 1.3
DAY = date(2026, 12, 1)  # a Tuesday, inside the booking window of the fixed clock below
NOW = "2026-11-25T12:00:00"
TECHS = [f"tech-{n}" for n in range(5)]
# every third service keeps buffers around its bookings, so buffers are in play in the busy week
SERVICES = [
    {
        "id": f"service-{n}",
        "name": f"Service {n}",
        "minutes": 30 * (1 + n % 4),
        "buffer_before_minutes": 15 * (n % 3 == 0),
        "buffer_after_minutes": 15 * (n % 3 == 0),
    }
    for n in range(10)
]
HOLDS = 500
HOURS = [["08:00", "12:00"], ["13:00", "19:00"]]
BOOKING = {
    "enabled": True,
    "slot_minutes": 15,
    "capacity": 60,
    "max_days_ahead": 60,
    "min_notice_minutes": 0,
    "hours": {day: HOURS for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")},
    "closed_dates": [],
    "services": SERVICES,
    "techs": [
        {"id": t, "name": t, **({"hours": {"tue": [["09:00", "17:00"]]}} if i % 2 else {})}
        for i, t in enumerate(TECHS)
    ],
}
# the list pages measured, with the rows each returns: a first page, one from the middle (the cursor a
# client holds after paging halfway), a status+date filter, and the two selective filters (one match)
PAGES = {"first": 25, "deep": 25, "filtered": 25, "email": 1, "ticket": 1}
STATUSES = ("scheduled", "pending", "confirmed", "checked_in", "completed", "no_show", "cancelled")


def tenant(tenant_id: str) -> dict:
    token = f"sk_test_{tenant_id}_bench_0001"
    return {
        "id": tenant_id,
        "name": tenant_id,
        "timezone": "America/New_York",
        "booking": BOOKING,
        "api_keys": [{"id": f"key_{tenant_id}", "token": token, "scopes": ["appointments.read"]}],
    }


def bulk_insert(
    tenant_id: str, count: int, first_day: date, days: int, seed: int, services: bool = False
) -> float:
    """Insert `count` appointments spread over `days` days in one transaction; returns seconds.
    With `services`, a booking may be of a service of the settings, with its buffers."""
    rng = random.Random(seed)
    # a generator of its own, so the other columns come out as they always have
    service_rng = random.Random(seed + 1000) if services else None
    started = time.perf_counter()
    created = clock.now().isoformat(sep=" ")
    columns = (
        "tenant_id",
        "customer_name",
        "customer_phone",
        "customer_email",
        "email_key",
        "scheduled_date",
        "scheduled_time",
        "duration_minutes",
        "status",
        "tech_id",
        "location_id",
        "source",
        "created_at",
        "ticket_id",
        "service_id",
        "buffer_before_minutes",
        "buffer_after_minutes",
    )
    sql = f"INSERT INTO appointment ({', '.join(columns)}) VALUES ({', '.join([db.param] * len(columns))})"
    rows = (
        (
            tenant_id,
            f"Customer {n}",
            "+15555550100",
            f"C{n}@Example.com",
            f"c{n}@example.com",
            (first_day + timedelta(days=rng.randrange(days))).isoformat(),
            f"{rng.randrange(8, 18):02d}:{rng.choice((0, 15, 30, 45)):02d}",
            rng.choice((15, 30, 45, 60, 90)),
            rng.choice(STATUSES),
            rng.choice(TECHS + [None]),
            rng.randrange(1, 4),
            "staff",
            created,
            str(996 + n) if n % 2 else None,
            *service_columns(service_rng),
        )
        for n in range(count)
    )
    with write_transaction():
        db.cursor().executemany(sql, rows)  # one prepared statement, one transaction
    return time.perf_counter() - started


def service_columns(rng) -> tuple:
    """service_id and its buffers for a booked row: a service of the settings, or none."""
    service = rng.choice(SERVICES + [None]) if rng else None
    if service is None:
        return None, 0, 0
    return service["id"], service["buffer_before_minutes"], service["buffer_after_minutes"]


def bulk_holds(tenant_id: str, count: int, first_day: date, days: int, seed: int) -> None:
    """`count` live slot holds spread over `days` days (expiring a day after the bench clock)."""
    rng = random.Random(seed)
    now = clock.now()
    columns = (
        "id",
        "tenant_id",
        "scheduled_date",
        "scheduled_time",
        "duration_minutes",
        "service_id",
        "tech_id",
        "buffer_before_minutes",
        "buffer_after_minutes",
        "status",
        "expires_at",
        "created_at",
    )
    sql = f"INSERT INTO slot_hold ({', '.join(columns)}) VALUES ({', '.join([db.param] * len(columns))})"
    rows = []
    for n in range(count):
        service = rng.choice(SERVICES)
        day = (first_day + timedelta(days=rng.randrange(days))).isoformat()
        rows.append(
            (
                f"hold_{n:024x}",
                tenant_id,
                day,
                f"{rng.randrange(8, 18):02d}:{rng.choice((0, 15, 30, 45)):02d}",
                service["minutes"],
                service["id"],
                rng.choice(TECHS + [None]),
                service["buffer_before_minutes"],
                service["buffer_after_minutes"],
                "active",
                now + timedelta(days=1),
                now,
            )
        )
    with write_transaction():
        db.cursor().executemany(sql, rows)


def median_ms(fn, calls: int) -> float:
    """Median wall time of `calls` calls after a few warm-up calls, in milliseconds."""
    return paired_median_ms([fn], calls)[0]


def paired_median_ms(fns, calls: int) -> list[float]:
    """Median wall time of each function, calling them in turn so that load changes hit all alike."""
    samples = [[] for _ in fns]
    for _ in range(5):
        for fn in fns:
            fn()
    for _ in range(calls):
        for fn, bucket in zip(fns, samples, strict=True):
            started = time.perf_counter()
            fn()
            bucket.append((time.perf_counter() - started) * 1000)
    return [statistics.median(bucket) for bucket in samples]


def get_ok(client, url: str, token: str) -> dict:
    response = client.get(url, headers={"Authorization": f"Bearer {token}"})
    if response.status_code != 200:
        raise SystemExit(f"{url}: {response.status_code} {response.get_data(as_text=True)[:300]}")
    return response.get_json()


def bench_slots(client, calls: int) -> dict:
    """GET /appointments/slots (and the domain function) for one day: busy week vs empty calendar."""
    load_fixture({"tenants": [tenant("empty"), tenant("busy")]})
    week_start = DAY - timedelta(days=DAY.weekday())
    build = bulk_insert("busy", 2000, week_start, 7, seed=1, services=True)
    bulk_holds("busy", HOLDS, week_start, 7, seed=4)
    day_count = (
        Appointment.select()
        .where((Appointment.tenant == "busy") & (Appointment.scheduled_date == DAY))
        .count()
    )
    day_holds = (
        SlotHold.select().where((SlotHold.tenant == "busy") & (SlotHold.scheduled_date == DAY)).count()
    )
    query = f"/api/v1/appointments/slots?date={DAY}&service_id=service-3&tech_id=tech-1"
    figures = {
        "build_s": build,
        "busy_day_appointments": day_count,
        "busy_week_holds": HOLDS,
        "busy_day_holds": day_holds,
    }
    calls_http = [
        lambda t=f"sk_test_{name}_bench_0001": get_ok(client, query, t) for name in ("empty", "busy")
    ]
    calls_domain = [lambda n=name: list_slots(n, DAY, "service-3", "tech-1") for name in ("empty", "busy")]
    assert all(call()["data"] for call in calls_http), "no slots computed"
    figures["empty_http_ms"], figures["busy_http_ms"] = paired_median_ms(calls_http, calls)
    figures["empty_domain_ms"], figures["busy_domain_ms"] = paired_median_ms(calls_domain, calls)
    figures["http_ratio"] = figures["busy_http_ms"] / figures["empty_http_ms"]
    figures["domain_ratio"] = figures["busy_domain_ms"] / figures["empty_domain_ms"]
    token = "sk_test_busy_bench_0001"
    plain_vs_explain = [
        lambda u=url, t=token: get_ok(client, u, t)
        for url in (f"{query}&limit=100", f"{query}&limit=100&explain=true")
    ]
    assert all(slot.get("reasons") is not None for slot in plain_vs_explain[1]()["data"])
    figures["plain_http_ms"], figures["explain_http_ms"] = paired_median_ms(plain_vs_explain, calls)
    figures["explain_ratio"] = figures["explain_http_ms"] / figures["plain_http_ms"]
    return figures


def deep_cursor(app, tenant_id: str, limit: int, position: int, query: str = "") -> str:
    """The cursor a client would hold after paging to `position` (built as the endpoint builds it)."""
    from flask import g

    from shop.domain.appointments.appointments import ORDER
    from shop.models import Tenant
    from shop.platform.pagination import encode_cursor

    # (peewee's .get() would reset the offset to 0)
    [row] = list(
        Appointment.for_tenant(tenant_id).order_by(*[f.desc() for f, _ in ORDER]).offset(position).limit(1)
    )
    url = f"/api/v1/appointments?limit={limit}" + (f"&{query}" if query else "")
    with app.test_request_context(url):
        g.tenant = Tenant.get_by_id(tenant_id)  # a cursor is bound to its tenant, as auth sets it
        return encode_cursor([getattr(row, field.name) for field, _ in ORDER])


def bench_list(app, client, calls: int, big: int) -> dict:
    """First and deep keyset pages of GET /appointments at 1,000 and at `big` appointments."""
    load_fixture({"tenants": [tenant("small"), tenant("large")]})
    figures = {
        "small_build_s": bulk_insert("small", 1000, date(2025, 1, 1), 730, seed=2),
        "large_build_s": bulk_insert("large", big, date(2025, 1, 1), 730, seed=3),
    }
    urls = {}
    for name, size in (("small", 1000), ("large", big)):
        cursor = deep_cursor(app, name, 25, size // 2)
        urls[name] = {
            "first": "/api/v1/appointments?limit=25",
            "deep": f"/api/v1/appointments?limit=25&cursor={cursor}",
            "filtered": "/api/v1/appointments?limit=25&status=confirmed&date_to=2026-06-30",
            "email": "/api/v1/appointments?limit=25&customer_email=c5@EXAMPLE.com",
            "ticket": "/api/v1/appointments?limit=25&ticket_id=1001",
        }
    for page in PAGES:
        pair = [
            lambda u=urls[name][page], t=f"sk_test_{name}_bench_0001": get_ok(client, u, t)
            for name in ("small", "large")
        ]
        assert all(len(call()["data"]) == PAGES[page] for call in pair)
        if page == "deep":  # the page must start where the cursor points, halfway down
            assert all(call()["data"][0]["scheduled_date"] < "2026" for call in pair[1:])
        figures[f"small_{page}_ms"], figures[f"large_{page}_ms"] = paired_median_ms(pair, calls)
    for page in PAGES:
        figures[f"{page}_ratio"] = figures[f"large_{page}_ms"] / figures[f"small_{page}_ms"]
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="timed calls per figure (default 200)")
    parser.add_argument(
        "--big", type=int, default=200_000, help="appointments in the large list (default 200,000)"
    )
    args = parser.parse_args()
    if not (10 <= args.calls <= 2000 and 1000 <= args.big <= 500_000):
        parser.error("keep it bounded: calls 10-2000, big 1,000-500,000")
    app = create_app()
    clock.advance((datetime.fromisoformat(NOW) - clock.now()).total_seconds())
    client = app.test_client()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    slots = bench_slots(client, args.calls)
    listing = bench_list(app, client, args.calls, args.big)
    for name, value in {**slots, **listing}.items():
        print(f"{name:28s} {value:10.3f}" if isinstance(value, float) else f"{name:28s} {value:10d}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    slot_ok = report_result(
        "slots of a busy day against an empty one",
        slots["busy_http_ms"],
        slots["empty_http_ms"],
        "ms",
        SLOT_GOAL,
        False,
    )
    list_ok = all(
        [
            report_result(
                f"appointment list, {page} page, large against 1k",
                listing[f"large_{page}_ms"],
                listing[f"small_{page}_ms"],
                "ms",
                LIST_GOAL,
                at_least=False,
            )
            for page in PAGES
        ]
    )
    print(
        f"slots: busy/empty {slots['http_ratio']:.2f} (goal <= {SLOT_GOAL}) {'met' if slot_ok else 'MISSED'}"
    )
    print(f"slots: explain=true/plain on the busy day {slots['explain_ratio']:.2f} (reported, no goal)")
    ratios = ", ".join(f"{page} {listing[f'{page}_ratio']:.2f}" for page in PAGES)
    print(f"list: 200k/1k {ratios} (goal <= {LIST_GOAL}) {'met' if list_ok else 'MISSED'}")
    return 0 if slot_ok and list_ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Reminders (issue 25): the due-reminder sweep with 100,000 future appointments against 1,000, and
reminders sent per second against the plain send pipeline of bench/messages.py.

- sweep: the sweep's read of the due rows (`due_reminder_ids`, a range of the (status,
  scheduled_for) index) with 100 reminders due among the reminders of 1,000 future appointments,
  and among those of 100,000 (two reminders each), a database file each, read in alternate turns;
  the goal is a time ratio of at most 1.2 (an index range, not a scan);
- send: reminders due at once, from the sweep's enqueue until the SMTP server accepted the last
  one, through the real consumer (`python -m tasks`, 4 threads), against the same number of API
  sends through the same consumer to the same server (bench/messages.py's round); the goal is a
  rate ratio of at least 0.8. Rounds alternate the two; the median ratio is judged. Each round
  also gives the consumer's CPU milliseconds per message (/proc/<pid>/stat: its threads' user and
  system time), the evidence that does not depend on how busy the shared machine is.

SQLite in a temporary folder, aiosmtpd on 127.0.0.1; bounded in count and time. Exits 0 when both
goals are met, 1 when one is missed.

    python bench/reminders.py --count 300 --rounds 3
"""

import sys
from pathlib import Path

# bench/platform.py would shadow the standard library's `platform` for everything imported here
# (bench_result imports the standard library only, so it may come before bench/ leaves the path)
from bench_result import cpu_seconds, report_median, report_result

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from datetime import UTC, timedelta  # noqa: E402
from zoneinfo import ZoneInfo  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BENCH = Path(__file__).resolve().parent
SWEEP_GOAL, SEND_GOAL = 1.2, 0.8
SMALL, LARGE, DUE = 1_000, 100_000, 100
ZONE = "America/New_York"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=300, help="reminders (and API sends) per round (300)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of API sends then reminders (3)")
    parser.add_argument("--sweeps", type=int, default=200, help="timed sweep reads per size (200)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds to wait for one round's delivery")
    args = parser.parse_args()
    if not (1 <= args.count <= 500 and 1 <= args.rounds <= 10 and 10 <= args.sweeps <= 2000):
        parser.error("keep it bounded: count 1-500, rounds 1-10, sweeps 10-2000")
    if not 1 <= args.timeout <= 600:
        parser.error("keep it bounded: timeout 1-600 s")
    return args


def bench_module(name: str):
    """Another bench script as a module (bench/ is not a package; platform.py shadows a stdlib name)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def insert_appointments(tenant: str, first_id: int, count: int, start, due: bool, phone: str = "n/a") -> None:
    """`count` appointments at `start` (a naive UTC instant) with two reminder rows each: both due
    now (`due`), or a day and two hours before the start (pending, in the future)."""
    from shop import clock
    from shop.db import db
    from shop.domain.appointments.reminders import start_instant
    from shop.models import Appointment, AppointmentReminder, Tenant

    shop = Tenant.get_by_id(tenant)
    zone = ZoneInfo(shop.timezone or "UTC")  # the job re-checks the start in it
    # the shop's rules the rows come from (a row whose rule is gone is cancelled, not sent)
    rules = [{"before_minutes": before, "channels": ["email"]} for before in (1440, 120)]
    Tenant.update(booking={**(shop.booking or {}), "reminders": rules}).where(Tenant.id == tenant).execute()
    local = start.replace(tzinfo=UTC).astimezone(zone)
    now = clock.now()
    for chunk in range(0, count, 1000):  # within SQLite's 32,766 parameters a statement
        ids = range(first_id + chunk, first_id + min(count, chunk + 1000))
        appointments = [
            {
                "id": i,
                "tenant": tenant,
                "customer_name": f"Customer {i}",
                "customer_phone": phone,
                "customer_email": "ann@example.com",
                "email_key": "ann@example.com",
                "scheduled_date": local.date(),
                "scheduled_time": local.strftime("%H:%M"),
                "status": "confirmed",
                "created_at": now,
            }
            for i in ids
        ]
        starts_at = start_instant(Appointment(**appointments[0]), zone)
        rows = [
            {
                "id": f"rem_{i:012x}{before:012x}",
                "tenant": tenant,
                "appointment": i,
                "kind": "reminder",
                "before_minutes": before,
                "channels": ["email"],
                "starts_at": starts_at,
                "scheduled_for": now - timedelta(minutes=1) if due else starts_at - timedelta(minutes=before),
                "status": "pending",
                "created_at": now,
                "updated_at": now,
            }
            for i in ids
            for before in ((120,) if due else (1440, 120))
        ]
        with db.atomic():
            Appointment.insert_many(appointments).execute()
            AppointmentReminder.insert_many(rows).execute()


BLOCK = 10  # sweep reads per turn of one size before the other's


def sweep_times(count: int) -> list[float]:
    """Seconds of `count` sweep reads on the database in use, after one untimed read (a connection
    just opened reads the schema first)."""
    from shop.domain.appointments.reminders import due_reminder_ids

    assert len(due_reminder_ids()) == DUE
    times = []
    for _ in range(count):
        started = time.perf_counter()
        found = due_reminder_ids()
        times.append(time.perf_counter() - started)
        assert len(found) == DUE, len(found)
    return times


def sweep_bench(args, folder: Path) -> dict:
    """The sweep read with SMALL and with LARGE future appointments (and DUE due reminders), each
    size in a database file of its own, read in turns of BLOCK, so a busy spell of the shared
    machine falls on both sizes alike; the app's own database is pointed back to afterwards."""
    from shop import clock, create_app
    from shop.db import init_database
    from shop.domain.fixtures import load_fixture

    files = {size: str(folder / f"sweep-{size}.sqlite3") for size in (SMALL, LARGE)}
    now = clock.now().replace(second=0, microsecond=0)
    for size, path in files.items():
        create_app({"DATABASE": path})
        load_fixture({"tenants": [{"id": "sweep", "name": "Sweep", "timezone": ZONE}]})
        insert_appointments("sweep", 1, DUE, now + timedelta(hours=3), True)
        insert_appointments("sweep", 1_000, size, now + timedelta(days=10), False)
    times = {size: [] for size in files}
    for _ in range(0, args.sweeps, BLOCK):
        for size, path in files.items():
            init_database(path)
            times[size] += sweep_times(BLOCK)
    create_app()  # back to the app's database, where the consumer works
    small, large = (statistics.median(times[size]) for size in (SMALL, LARGE))
    return {
        "future_appointments": [SMALL, LARGE],
        "due": DUE,
        "sweep_ms": [round(small * 1000, 3), round(large * 1000, 3)],
        "ratio": round(large / small, 3),
        "goal": SWEEP_GOAL,
        "met": large / small <= SWEEP_GOAL,
    }


def reminder_round(shop: int, count: int, timeout: float) -> float:
    """Reminders per second: `count` due at once, from the sweep's enqueue to the last acceptance."""
    from shop import clock
    from shop.models import Message
    from tasks.reminders import sweep_reminders

    tenant = f"bench{shop}"
    start = clock.now().replace(second=0, microsecond=0) + timedelta(hours=3)
    insert_appointments(tenant, 10_000_000 + shop * 1_000, count, start, True)
    sent = Message.select().where(
        (Message.tenant == tenant) & Message.automated & (Message.delivery_status == "sent")
    )
    started = time.perf_counter()
    sweep_reminders()  # what the consumer's scheduler enqueues every minute
    while sent.count() < count and time.perf_counter() - started < timeout:
        time.sleep(0.01)
    if sent.count() < count:
        raise SystemExit(f"only {sent.count()} of {count} reminders were accepted within {timeout} s")
    return count / (time.perf_counter() - started)


def measured(pid: int, run, *args) -> tuple[float, float]:
    """(messages per second, consumer CPU ms per message) of one round `run(shop, count, timeout)`."""
    count, before = args[1], cpu_seconds(pid)
    rate = run(*args)
    return rate, (cpu_seconds(pid) - before) * 1000 / count


def main() -> None:
    args = parse_args()
    messages = bench_module("messages")
    folder = Path(tempfile.mkdtemp(prefix="bench-reminders-"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sink = messages.start_sink(port)
    rounds = []
    try:
        env = {
            **os.environ,
            "SHOP_INSTANCE_PATH": str(folder),
            "SHOP_DATABASE": str(folder / "b.sqlite3"),
            "SHOP_SECRET_KEY": "bench",
            "SHOP_SMTP_URL": f"smtp://127.0.0.1:{port}",
            "SHOP_RATE_LIMIT_CAPACITY": "1000000000",
            "SHOP_RATE_LIMIT_REFILL": "1000000000",
        }
        os.environ.update(env)
        sweep = sweep_bench(args, folder)
        pipeline = messages.Pipeline(
            env, 2 * args.rounds
        )  # a shop per round of either side, and one to warm up
        try:
            for n in range(args.rounds):  # interleaved, so a slow spell of the machine hits both sides
                pid = pipeline.consumer.pid
                plain, plain_cpu = measured(pid, pipeline.round, n, args.count, args.timeout)
                ours, ours_cpu = measured(pid, reminder_round, args.rounds + n, args.count, args.timeout)
                rounds.append(
                    {
                        "api_sends_per_s": round(plain, 1),
                        "reminders_per_s": round(ours, 1),
                        "ratio": round(ours / plain, 3),
                        "consumer_cpu_ms_per_api_send": round(plain_cpu, 2),
                        "consumer_cpu_ms_per_reminder": round(ours_cpu, 2),
                    }
                )
        finally:
            pipeline.stop()
    finally:
        sink.terminate()
        sink.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
    small_ms, large_ms = sweep["sweep_ms"]
    report_result(
        "due-reminder sweep, 100,000 against 1,000 appointments", large_ms, small_ms, "ms", SWEEP_GOAL, False
    )
    ratio = report_median(
        "reminders sent against plain API sends",
        rounds,
        "reminders_per_s",
        "api_sends_per_s",
        "messages/s",
        SEND_GOAL,
    )
    send = {"per_round": args.count, "rounds": rounds, "median_ratio": ratio, "goal": SEND_GOAL}
    send["met"] = ratio >= SEND_GOAL
    print(
        json.dumps(
            {"sweep": sweep, "send": send, "load_average": [round(x, 2) for x in os.getloadavg()]}, indent=2
        )
    )
    sys.exit(0 if sweep["met"] and send["met"] else 1)


if __name__ == "__main__":
    main()

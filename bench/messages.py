"""Sends per second through the whole pipeline (API → consumer → SMTP) against a plain smtplib loop.

The API is driven in-process through Flask's test client (the platform benchmark measures the
HTTP server); the consumer is the real `python -m tasks` process with 4 worker threads; the sink
is aiosmtpd on 127.0.0.1. The ratio is against the sink's intake from one smtplib connection;
the ratio against a connection per message is printed too. Rounds alternate baseline and
pipeline, so a slow spell of the shared machine falls on both; the goal is judged on the median
ratio of the rounds.
"""

import sys
from pathlib import Path

# bench/platform.py would shadow the standard library's `platform` for everything imported here
from bench_result import cpu_seconds, report_median  # noqa: E402  (before bench/ leaves the path)

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import smtplib  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from email.mime.text import MIMEText  # noqa: E402
from email.utils import formatdate, make_msgid  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
GOAL = 0.5
TOKEN = "sk_test_bench_messages_01"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=500, help="messages per round (default 500)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of baseline then pipeline (default 5)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds to wait for one round's delivery")
    args = parser.parse_args()
    if not (1 <= args.count <= 5000 and 1 <= args.rounds <= 20 and 1 <= args.timeout <= 600):
        parser.error("keep it bounded: count 1-5000, rounds 1-20, timeout 1-600 s")
    return args


def _mime(i: int) -> MIMEText:
    """The same kind of message the service builds (text/plain, UTF-8, the same headers)."""
    mime = MIMEText(f"Ready {i}", "plain", "utf-8")
    mime["From"], mime["To"], mime["Subject"] = "bench@localhost", "ann@example.com", "Ticket #1001: Screen"
    mime["Date"], mime["Message-ID"] = formatdate(usegmt=True), make_msgid(domain="localhost")
    return mime


def baseline(port: int, count: int, per_message: bool) -> float:
    """Messages per second a plain smtplib loop hands to the sink: one connection, or one per message."""
    started = time.perf_counter()
    if per_message:
        for i in range(count):
            with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
                client.send_message(_mime(i))
    else:
        with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
            for i in range(count):
                client.send_message(_mime(i))
    return count / (time.perf_counter() - started)


class Meter:
    """CPU milliseconds per message of each named process over a `with` block (the bench's own
    process by `process_time`, the others from /proc), and the rate that CPU allows on this
    machine: the processes share its cores, and none (one Python process, its GIL) uses more than
    one, so no run can beat `1 / max(sum / cores, the busiest one)` messages a second."""

    def __init__(self, count: int, **pids: int):
        self.count, self.pids, self.ms = count, pids, {}

    def _read(self) -> dict:
        own = os.getpid()
        return {
            name: time.process_time() if pid == own else cpu_seconds(pid) for name, pid in self.pids.items()
        }

    def __enter__(self) -> "Meter":
        self.before = self._read()
        return self

    def __exit__(self, *exc) -> None:
        after = self._read()
        self.ms = {
            name: round((after[name] - self.before[name]) * 1000 / self.count, 3) for name in self.pids
        }

    def ceiling_per_s(self) -> float:
        total, busiest = sum(self.ms.values()), max(self.ms.values())
        return 1000 / max(total / (os.cpu_count() or 1), busiest)


def token(shop: int) -> str:
    return f"{TOKEN}_{shop}"


def fixture(shops: int) -> dict:
    """A shop per round: the send-rate check counts a shop's sends of the last minute, so rounds
    sharing one shop would each pay for the rounds before them."""
    return {
        "tenants": [
            {
                "id": f"bench{i}",
                "name": "Bench",
                "send_rate_per_minute": 1_000_000,
                "api_keys": [{"id": f"key_bench{i}", "token": token(i), "scopes": ["messages.write"]}],
                "customers": [{"id": 1 + i, "display_name": "Ann", "email": "ann@example.com"}],
                "tickets": [{"id": str(1001 + i), "customer_id": 1 + i, "subject": "Screen"}],
            }
            for i in range(shops)
        ]
    }


def start_sink(port: int) -> subprocess.Popen:
    """aiosmtpd in its own process, discarding what it accepts, so it competes with neither side."""
    sink = subprocess.Popen(
        [sys.executable, "-m", "aiosmtpd", "-n", "-l", f"127.0.0.1:{port}", "-c", "aiosmtpd.handlers.Sink"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return sink
        except OSError:
            time.sleep(0.05)
    sink.kill()
    raise SystemExit("the SMTP sink did not start")


class Pipeline:
    """The app in-process and the real consumer, on one database, for several rounds."""

    def __init__(self, env: dict, rounds: int):
        from shop import create_app
        from shop.domain.fixtures import load_fixture

        self.client = create_app().test_client()
        load_fixture(fixture(rounds + 1))
        self.consumer = subprocess.Popen(
            [sys.executable, "-m", "tasks"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(2)  # let the consumer start before any clock does
        self.round(rounds, 50, 60)  # warm up (first imports, connections), on a shop of its own

    def sent(self, shop: int) -> int:
        from shop.models import Message

        return (
            Message.select()
            .where((Message.tenant == f"bench{shop}") & (Message.delivery_status == "sent"))
            .count()
        )

    def round(self, shop: int, count: int, timeout: float) -> float:
        """Messages per second from the first POST until the server accepted the last one."""
        headers, ticket = {"Authorization": f"Bearer {token(shop)}"}, str(1001 + shop)
        started = time.perf_counter()
        for i in range(count):
            response = self.client.post(
                "/api/v1/messages/send",
                headers=headers,
                json={"ticket_id": ticket, "channel": "email", "body": f"Ready {i}"},
            )
            assert response.status_code == 202, response.get_data(as_text=True)
        while self.sent(shop) < count and time.perf_counter() - started < timeout:
            time.sleep(0.01)
        if self.sent(shop) < count:
            raise SystemExit(f"only {self.sent(shop)} of {count} messages were accepted within {timeout} s")
        return count / (time.perf_counter() - started)

    def stop(self) -> None:
        self.consumer.terminate()
        self.consumer.wait(timeout=10)


def main() -> None:
    args = parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-messages-"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sink = start_sink(port)
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
        pipeline = Pipeline(env, args.rounds)
        try:
            for shop in range(args.rounds):  # interleaved, so a slow spell of the machine hits both sides
                with Meter(args.count, bench=os.getpid(), sink=sink.pid) as base_cpu:
                    one = baseline(port, args.count, per_message=False)
                per = baseline(port, args.count, per_message=True)
                with Meter(args.count, api=os.getpid(), consumer=pipeline.consumer.pid, sink=sink.pid) as cpu:
                    ours = pipeline.round(shop, args.count, args.timeout)
                rounds.append(
                    {
                        "smtplib_one_connection_per_s": round(one, 1),
                        "smtplib_connection_per_message_per_s": round(per, 1),
                        "pipeline_per_s": round(ours, 1),
                        "ratio": round(ours / one, 3),
                        "ratio_vs_connection_per_message": round(ours / per, 3),
                        "cpu_ms_per_message": {"smtplib": base_cpu.ms, "pipeline": cpu.ms},
                        "ratio_ceiling_from_cpu": round(cpu.ceiling_per_s() / one, 3),
                    }
                )
        finally:
            pipeline.stop()
    finally:
        sink.terminate()
        sink.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
    ratio = report_median(
        "email sends against one smtplib connection",
        rounds,
        "pipeline_per_s",
        "smtplib_one_connection_per_s",
        "messages/s",
        GOAL,
    )
    print(
        json.dumps(
            {
                "messages_per_round": args.count,
                "rounds": rounds,
                "median_ratio": ratio,
                "median_ratio_vs_connection_per_message": statistics.median(
                    r["ratio_vs_connection_per_message"] for r in rounds
                ),
                "median_ratio_ceiling_from_cpu": statistics.median(
                    r["ratio_ceiling_from_cpu"] for r in rounds
                ),
                "goal": GOAL,
                "met": ratio >= GOAL,
                "load_average": [round(x, 2) for x in os.getloadavg()],
            },
            indent=2,
        )
    )
    sys.exit(0 if ratio >= GOAL else 1)


if __name__ == "__main__":
    main()

"""Webhook deliveries per second, from event emission to the receiver's 2xx, against a plain
requests.Session loop posting the same signed bodies to the same receiver, in the same run.

One consumer (`python -m tasks`, 4 worker threads) delivers to an HTTP receiver in its own process
on 127.0.0.1 (http, so both sides pay the same transport; TLS is exercised by the e2e tests).
Each round runs the loop, then the pipeline with a consumer of its own, so a slow spell of the
shared machine falls on both; the goal is judged on the median ratio of the rounds.
Bounded: --count events per round, --rounds, and every wait has a deadline.
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
import socket  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
GOAL = 0.8
SECRET = "whsec_bench_secret_0000000000000000000000"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=500, help="events per run (default 500)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of loop then pipeline (default 3)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds to wait for delivery")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)  # internal: run the receiver
    args = parser.parse_args()
    if not (1 <= args.count <= 5000 and 1 <= args.rounds <= 9 and 1 <= args.timeout <= 600):
        parser.error("keep it bounded: count 1-5000, rounds 1-9, timeout 1-600 s")
    return args


def serve(port: int) -> None:
    """The receiver: answers 200 to every POST (keep-alive) and GET /count with how many it got."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    received = [0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body in one segment: no delayed-ACK stalls
        wbufsize = 64 * 1024

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            received[0] += 1
            self._answer(b'{"ok":true}')

        def do_GET(self):
            self._answer(str(received[0]).encode())

        def _answer(self, body: bytes):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def per_ms(seconds: float, count: int) -> float:
    """Seconds spent over `count` items, as milliseconds per item."""
    return round(seconds * 1000 / count, 3)


def received(session, port: int) -> int:
    return int(session.get(f"http://127.0.0.1:{port}/count", timeout=5).text)


def baseline(session, port: int, count: int) -> float:
    """Signed posts per second from one requests.Session (keep-alive), the bodies the service sends."""
    from shop.domain.webhooks.signing import signature_header

    bodies = [
        json.dumps(
            {
                "object": "event",
                "id": f"evt_base{i}",
                "type": "customer.updated",
                "created": "2026-11-22T00:00:00.000Z",
                "api_version": "v1",
                "data": {"object": "customer", "id": str(i)},
            },
            separators=(",", ":"),
        ).encode()
        for i in range(count)
    ]
    started = time.perf_counter()
    for i, body in enumerate(bodies):
        headers = {
            "Content-Type": "application/json",
            "Service-Event-Id": f"evt_base{i}",
            "Service-Event-Type": "customer.updated",
            "Service-Signature": signature_header([SECRET], int(time.time()), body),
        }
        response = session.post(f"http://127.0.0.1:{port}/hook", data=body, headers=headers, timeout=10)
        assert response.status_code == 200
    return count / (time.perf_counter() - started)


def set_up_shop(port: int) -> None:
    """The app in this process, and a shop whose one subscription takes every event at the receiver."""
    from shop import create_app
    from shop.domain.fixtures import load_fixture

    create_app()
    load_fixture(
        {
            "tenants": [
                {
                    "id": "bench",
                    "name": "Bench",
                    "webhook_subscriptions": [
                        {"url": f"http://127.0.0.1:{port}/hook", "events": ["*"], "signing_secret": SECRET}
                    ],
                }
            ]
        }
    )


def pipeline(session, port: int, count: int, timeout: float, env: dict, cpu: dict) -> float:
    """Deliveries per second from the first emitted event until the receiver acknowledged the last,
    through a consumer started for the round.

    Also fills `cpu` with the CPU milliseconds per delivery of the consumer and of the emitting loop
    (reported beside the ratio: on a shared machine they move less than wall-clock rates).
    """
    from shop.db import write_transaction
    from shop.domain.events.outbox import emit

    launched = time.perf_counter()
    consumer = subprocess.Popen(
        [sys.executable, "-m", "tasks"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # the clock starts once the consumer delivers: one event through the whole pipeline first (the
        # baseline's connection is open before its clock starts too); a fixed pause left a loaded
        # machine's consumer still starting inside the measured time, its imports counted as deliveries'
        warm_up = received(session, port)
        with write_transaction():
            emit("bench", "customer.updated", {"object": "customer", "id": "warm-up"})
        while received(session, port) == warm_up:
            if time.perf_counter() - launched > timeout:
                raise SystemExit(f"the consumer delivered nothing within {timeout} s")
            time.sleep(0.02)
        cpu["consumer_start_s"] = round(time.perf_counter() - launched, 3)
        before = received(session, port)
        consumer_cpu = cpu_seconds(consumer.pid)
        started, emitter_cpu = time.perf_counter(), time.process_time()
        for i in range(count):
            with write_transaction():
                emit("bench", "customer.updated", {"object": "customer", "id": str(i)})
        cpu["emitter_ms_per_delivery"] = round((time.process_time() - emitter_cpu) * 1000 / count, 3)
        cpu["emit_s"] = round(time.perf_counter() - started, 3)
        cpu["delivered_during_emit"] = received(session, port) - before
        while received(session, port) - before < count and time.perf_counter() - started < timeout:
            time.sleep(0.02)
        done = received(session, port) - before
        if done < count:
            raise SystemExit(f"only {done} of {count} deliveries arrived within {timeout} s")
        rate = count / (time.perf_counter() - started)
        cpu["consumer_ms_per_delivery"] = round((cpu_seconds(consumer.pid) - consumer_cpu) * 1000 / count, 3)
        return rate
    finally:
        consumer.terminate()
        consumer.wait(timeout=10)


def main() -> None:
    args = parse_args()
    if args.serve:
        serve(args.serve)
        return
    import requests

    folder, port = Path(tempfile.mkdtemp(prefix="bench-webhooks-")), free_port()
    receiver = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    env = {
        **os.environ,
        "SHOP_INSTANCE_PATH": str(folder),
        "SHOP_DATABASE": str(folder / "b.sqlite3"),
        "SHOP_SECRET_KEY": "bench",
        "SHOP_WEBHOOK_ALLOW_HTTP": "1",
        "SHOP_WEBHOOK_TRUSTED_NETWORKS": "127.0.0.0/8",
    }
    os.environ.update(env)
    rounds = []
    try:
        session = requests.Session()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                received(session, port)
                break
            except requests.RequestException:
                time.sleep(0.05)
        set_up_shop(port)
        for _ in range(args.rounds):  # interleaved, so a slow spell of the machine hits both sides
            rounds.append(one_round(session, receiver.pid, port, args, env))
    finally:
        receiver.terminate()
        receiver.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
    ratio = report_median(
        "deliveries against a requests.Session loop",
        rounds,
        "pipeline_per_s",
        "requests_session_per_s",
        "posts/s",
        GOAL,
    )
    report = {
        "events_per_round": args.count,
        "rounds": rounds,
        "median_ratio": ratio,
        "goal": GOAL,
        "met": ratio >= GOAL,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(report, indent=2))
    sys.exit(0 if ratio >= GOAL else 1)


def one_round(session, receiver_pid: int, port: int, args, env: dict) -> dict:
    """The requests.Session loop, then the pipeline: their rates, ratio and CPU per post."""
    cpu = {}
    plain_cpu, receiver_cpu = time.process_time(), cpu_seconds(receiver_pid)
    plain = baseline(session, port, args.count)
    cpu["requests_session_ms_per_post"] = round((time.process_time() - plain_cpu) * 1000 / args.count, 3)
    cpu["receiver_ms_per_post_baseline"] = per_ms(cpu_seconds(receiver_pid) - receiver_cpu, args.count)
    receiver_cpu = cpu_seconds(receiver_pid)
    ours = pipeline(session, port, args.count, args.timeout, env, cpu)
    cpu["receiver_ms_per_post_pipeline"] = per_ms(cpu_seconds(receiver_pid) - receiver_cpu, args.count)
    return {
        "requests_session_per_s": round(plain, 1),
        "pipeline_per_s": round(ours, 1),
        "ratio": round(ours / plain, 3),
        "cpu": cpu,
    }


if __name__ == "__main__":
    main()

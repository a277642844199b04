"""Inbound SMS webhooks per second through the whole route (signature, tenant, customer, dedupe,
message, event, notification, one transaction) against a bare signed route (the same app and
request pipeline, the same signature check and JSON parse, then 200) under the same gunicorn
settings in the same run; and emails per second through mail-in.

Both servers: gunicorn with the shipped settings (2 gthread workers of 4 threads) on 127.0.0.1,
SQLite in a temp folder; clients: THREADS requests.Sessions posting gateway-signed JSON.
Bounded: --count each.
"""

import sys
from pathlib import Path

# bench/platform.py would shadow the standard library's `platform` for everything imported here
# (bench_result imports the standard library only, so it may come before bench/ leaves the path)
from bench_result import report_result

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import smtplib  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from email.message import EmailMessage  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
GOAL = 0.5
SECRET = "bench-gateway-secret"
SHOP_NUMBER = "+15555550000"
THREADS = 4
# the baseline: the same app and request pipeline, a route that checks the same signature and answers
BARE_APP = """
from shop import create_app
from shop.inbound.gateway import verified_json

app = create_app()


def bare():
    verified_json()
    return {"object": "inbound_receipt"}


bare._public = True
app.add_url_rule("/bench/bare", "bench_bare", bare, methods=["POST"])
"""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=1000, help="webhooks per server (default 1000)")
    parser.add_argument("--emails", type=int, default=300, help="emails through mail-in (default 300)")
    args = parser.parse_args()
    if not (1 <= args.count <= 20000 and 1 <= args.emails <= 5000):
        parser.error("keep it bounded: count 1-20000, emails 1-5000")
    return args


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on {port} after {timeout} s")


def serve(app: str, env: dict, folder: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    argv = [sys.executable, "-m", "gunicorn", "-c", "python:shop.gunicorn_conf", "--workers", "2"]
    argv += ["--bind", f"127.0.0.1:{port}", "--chdir", str(folder), "--pythonpath", str(ROOT), app]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(port)
    return proc, port


def post_all(port: int, count: int, prefix: str, path: str = "/inbound/sms/gateway") -> float:
    """Signed gateway SMS per second from THREADS sessions, each message its own id."""
    import requests

    from shop.domain.webhooks.signing import signature_header

    def worker(index: int, errors: list) -> None:
        session = requests.Session()
        for i in range(index, count, THREADS):
            body = json.dumps(
                {"id": f"{prefix}-{i}", "from": "+15555550100", "to": SHOP_NUMBER, "body": f"hello {i}"}
            ).encode()
            headers = {
                "Content-Type": "application/json",
                "Service-Signature": signature_header([SECRET], int(time.time()), body),
            }
            response = session.post(f"http://127.0.0.1:{port}{path}", data=body, headers=headers)
            if response.status_code != 200:
                errors.append(response.status_code)

    errors: list = []
    threads = [threading.Thread(target=worker, args=(i, errors)) for i in range(THREADS)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise SystemExit(f"{len(errors)} webhooks failed: {sorted(set(errors))}")
    return count / (time.perf_counter() - started)


def emails(port: int, count: int) -> float:
    """Messages per second one SMTP client session delivers to mail-in."""
    started = time.perf_counter()
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
        for i in range(count):
            message = EmailMessage()
            message["From"], message["To"] = "ann@example.com", "hello@bench.test"
            message["Message-ID"], message["Subject"] = f"<bench-{i}@example.com>", "Re: repair"
            message.set_content(f"Hello {i}")
            smtp.send_message(message)
    return count / (time.perf_counter() - started)


def main() -> None:
    args = parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-inbound-"))
    env = {
        **os.environ,
        "SHOP_INSTANCE_PATH": str(folder),
        "SHOP_DATABASE": str(folder / "b.sqlite3"),
        "SHOP_SECRET_KEY": "bench",
        "SHOP_SMS_GATEWAY_SECRET": SECRET,
    }
    os.environ.update(env)
    (folder / "bare_app.py").write_text(BARE_APP)
    from shop import create_app
    from shop.domain.fixtures import load_fixture

    create_app()
    customers = [{"id": 1, "display_name": "Ann", "phone": "+15555550100", "email": "ann@example.com"}]
    tenant = {
        "id": "bench",
        "name": "Bench",
        "sms_numbers": [SHOP_NUMBER],
        "inbound_email": "hello@bench.test",
    }
    load_fixture({"tenants": [{**tenant, "customers": customers}]})
    procs = []
    try:
        bare, bare_port = serve("bare_app:app", env, folder)
        procs.append(bare)
        post_all(bare_port, min(100, args.count), "warm", "/bench/bare")
        baseline = post_all(bare_port, args.count, "bare", "/bench/bare")
        shop, shop_port = serve("app:app", env, folder)
        procs.append(shop)
        post_all(shop_port, min(100, args.count), "warm")
        inbound = post_all(shop_port, args.count, "sms")
        mail_port = free_port()
        argv = [
            sys.executable,
            "-m",
            "flask",
            "--app",
            "app",
            "shop",
            "mail-in",
            "--listen",
            f"127.0.0.1:{mail_port}",
        ]
        procs.append(
            subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
        wait_for(mail_port)
        per_second = emails(mail_port, args.emails)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(folder, ignore_errors=True)
    ratio = inbound / baseline
    report_result(
        "inbound SMS webhooks against a bare signed route", inbound, baseline, "req/s", GOAL, at_least=True
    )
    print(
        json.dumps(
            {
                "bare_signed_route_per_s": round(baseline, 1),
                "inbound_sms_per_s": round(inbound, 1),
                "ratio": round(ratio, 2),
                "goal": GOAL,
                "emails_per_s_through_mail_in": round(per_second, 1),
            },
            indent=2,
        )
    )
    if ratio < GOAL:
        raise SystemExit(f"inbound SMS at {ratio:.2f} of the bare signed route, under the goal {GOAL}")


if __name__ == "__main__":
    main()

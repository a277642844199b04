"""Several boxes on one PostgreSQL database: two gunicorn API processes and two consumers.

Both APIs race for the last places of one slot; 200 events made through both APIs all reach an
HTTPS receiver while one consumer is SIGKILLed mid-burst; only the other consumer runs the periodic
tasks, and its sweep recovers what the killed one held.
"""

import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from datetime import date, timedelta

import pytest
import requests

from shop.models import Appointment, Event, WebhookDelivery
from tests.helpers import tenant_fixture
from tests.helpers.processes import ROOT, http_ok, stop, wait_until
from tests.helpers.receivers import free_port
from tests.helpers.webhook_receiver import WebhookReceiver

pytestmark = pytest.mark.postgres_only

TOKEN = "sk_test_acme_token_0001"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}
EVERY_DAY = {day: [["09:00", "17:00"]] for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")}
BOOKING = {
    "enabled": True,
    "slot_minutes": 30,
    "capacity": 3,
    "max_days_ahead": 60,
    "min_notice_minutes": 60,
    "hours": EVERY_DAY,
    "closed_dates": [],
    "services": [],
    "techs": [],
}
RACERS = 12  # creates racing for the slot's last two places, half through each API
PINGS = 200  # events made through the APIs, half through each
SWEEP_SECONDS = 60  # Huey's scheduler enqueues the periodic tasks once a minute


class Boxes:
    """The processes of the test: API servers and consumers on the pass's PostgreSQL database."""

    def __init__(self, log_dir, env):
        self.log_dir, self.env, self.procs = log_dir, env, []

    def start(self, name: str, argv: list[str], **env) -> subprocess.Popen:
        log = open(self.log_dir / f"{name}.log", "w")
        env = {**self.env, **env}
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        self.procs.append((proc, log))
        return proc

    def api(self, name: str) -> str:
        """A gunicorn with the shipped settings (2 workers of 4 threads); its base URL once it answers."""
        port = free_port()
        self.start(
            name,
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                "python:shop.gunicorn_conf",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
                "--threads",
                "4",
                "app:app",
            ],
        )
        base = f"http://127.0.0.1:{port}/api/v1"
        wait_until(lambda: http_ok(f"{base}/health"), timeout=30)
        return base

    def log(self, name: str) -> str:
        return (self.log_dir / f"{name}.log").read_text()

    def stop_all(self):
        for proc, log in self.procs:
            stop(proc)
            log.close()


@pytest.fixture
def boxes(app, load, tmp_path):
    load(tenant_fixture("acme", booking=BOOKING))
    receiver = WebhookReceiver(tmp_path, delay=0.02).__enter__()
    env = {
        **os.environ,
        "SHOP_DATABASE": app.config["DATABASE"],
        "SHOP_RATE_LIMIT_CAPACITY": "100000",
        "SHOP_RATE_LIMIT_REFILL": "10000",
        "SHOP_WEBHOOK_TRUSTED_NETWORKS": "127.0.0.0/8",
        "SHOP_WEBHOOK_CA_BUNDLE": receiver.ca_path,
        "SHOP_WEBHOOK_TIMEOUT": "1",
        "SHOP_WEBHOOK_RETRY_DELAYS": "0,0.3,0.3,0.3,0.3,0.3,0.3,0.3",
        "SHOP_LOG_LEVEL": "INFO",
    }
    running = Boxes(tmp_path, env)
    running.receiver = receiver
    yield running
    running.stop_all()
    receiver.__exit__(None, None, None)


def post(base: str, path: str, body: dict | None = None) -> requests.Response:
    return requests.post(f"{base}{path}", json=body or {}, headers=HEADERS, timeout=30)


def at_once(calls) -> list:
    """Run the calls together, each in its own thread released by one barrier; their results."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(i, call):
        barrier.wait(timeout=30)
        results[i] = call()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


def test_two_apis_and_two_consumers_on_one_database(boxes):
    apis = [boxes.api("api-1"), boxes.api("api-2")]
    # at DEBUG a scheduler says each time it enqueues a periodic task (at INFO that chatter is hidden)
    periodic = boxes.start("consumer-periodic", [sys.executable, "-m", "tasks"], SHOP_LOG_LEVEL="DEBUG")
    other = boxes.start(
        "consumer-other",
        [sys.executable, "-m", "flask", "--app", "app", "shop", "worker", "--no-periodic"],
        SHOP_LOG_LEVEL="DEBUG",
    )
    # both consumers running (their start-up line) before any work: the kill must hit a working one
    wait_until(lambda: "Periodic tasks are enabled" in boxes.log("consumer-periodic"), timeout=60)
    wait_until(lambda: "Periodic tasks are disabled" in boxes.log("consumer-other"), timeout=60)
    receiver = boxes.receiver
    sub = post(apis[0], "/webhooks", {"url": receiver.hook_url(), "events": ["*"]})
    assert sub.status_code == 201, sub.text
    sub_id = sub.json()["id"]

    # the last two places of one slot: one of three is taken, twelve creates race through both APIs
    day = (date.today() + timedelta(days=7)).isoformat()
    new = {
        "customer_name": "Ann Lee",
        "customer_phone": "+15555550100",
        "scheduled_date": day,
        "scheduled_time": "10:00",
    }
    assert post(apis[1], "/appointments", new).status_code == 201
    answers = at_once([lambda base=apis[i % 2]: post(base, "/appointments", new) for i in range(RACERS)])
    outcomes = Counter(
        f"{r.status_code} {r.json()['error']['code']}" if r.status_code >= 400 else str(r.status_code)
        for r in answers
    )
    assert outcomes == {"201": 2, "409 slot_unavailable": RACERS - 2}, outcomes
    assert Appointment.select().where(Appointment.scheduled_date == day).count() == 3

    # 200 pings through both APIs, four senders each; the consumer without the periodic tasks is
    # SIGKILLed mid-burst, and the other consumer's sweep recovers the deliveries it held
    def send(base):
        with requests.Session() as session:
            return [
                session.post(f"{base}/webhooks/{sub_id}/ping", headers=HEADERS, timeout=30).status_code
                for _ in range(PINGS // 8)
            ]

    # the kill comes while the senders still send: delivering can outpace them, so a kill after the
    # last ping could find every event already received
    statuses = []
    senders = threading.Thread(
        target=lambda: statuses.extend(at_once([lambda base=apis[i % 2]: send(base) for i in range(8)]))
    )
    senders.start()
    wait_until(lambda: len(receiver.events()) >= 40, timeout=60)
    os.kill(other.pid, signal.SIGKILL)
    other.wait(timeout=10)
    at_kill = len(receiver.events())
    senders.join(timeout=180)
    assert Counter(code for batch in statuses for code in batch) == {202: PINGS}
    events = Event.select().count()
    assert events == PINGS + 3  # the pings and the three appointment.created
    delivered = WebhookDelivery.select().where(WebhookDelivery.status == "delivered")
    wait_until(lambda: delivered.count() == events, timeout=SWEEP_SECONDS + 45, interval=0.5)
    received = Counter(item["body"]["id"] for item in receiver.events())

    assert at_kill < events  # the kill really happened mid-burst
    assert set(received) == {e.id for e in Event.select()}  # every event arrived: none lost
    # only an attempt cut off by the kill (sent, not yet recorded) may arrive twice
    assert sum(count - 1 for count in received.values()) <= 4
    assert periodic.poll() is None
    # the periodic tasks ran on one consumer only, and that one's sweeps kept running
    assert "Periodic tasks are disabled" in boxes.log("consumer-other")
    assert "Enqueueing periodic task" not in boxes.log("consumer-other")
    assert "Periodic tasks are enabled" in boxes.log("consumer-periodic")
    assert boxes.log("consumer-periodic").count("Enqueueing periodic task tasks.webhooks.sweep_webhooks") >= 1

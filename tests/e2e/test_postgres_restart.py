"""The service survives a PostgreSQL restart, on a server this test owns (initdb and pg_ctl in a
temporary folder on a free port; the machine's shared server is never touched).

A burst of creates and pings runs through gunicorn (2 workers of 4 threads) and a consumer while
the server is restarted with `-m fast`, then once with `-m immediate` (a crash). Afterwards: every
record the API acknowledged reads back, every event in the database reached the receiver
(duplicates only as the same event id), no answer was a 500 or anything but the spec's JSON body,
health was back to 200 within 10 s of each return, and neither gunicorn's workers nor the consumer
were restarted.
"""

import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest
import requests
from flask import Config

from shop import models
from shop.models import Event
from shop.queue import setup
from tests.helpers import tenant_fixture
from tests.helpers.own_postgres import OwnPostgres, why_not
from tests.helpers.processes import ROOT, stop, wait_until
from tests.helpers.servers import gunicorn
from tests.helpers.webhook_receiver import WebhookReceiver

pytestmark = pytest.mark.postgres_only

HEADERS = {"Authorization": "Bearer sk_test_acme_token_0001"}
SENDERS = 6
HEALTH_BACK_WITHIN = 10.0


@pytest.fixture
def own_server(app, load):
    """A server of the test's own with the app's tables and the acme tenant; the in-process app
    points at it for the test and back at the pass's database afterwards."""
    problem = why_not()
    if problem:
        pytest.skip(f"no PostgreSQL server of the test's own: {problem}")
    server = OwnPostgres().init()
    try:
        config = Config(app.config.root_path)
        config.update(app.config)
        config["DATABASE"] = server.create_database("shop")
        setup(config)
        models.create_tables()
        load(tenant_fixture("acme"))
        yield server, config["DATABASE"]
    finally:
        setup(app.config)
        server.stop()


class Burst(threading.Thread):
    """One client: pings its subscription and creates subscriptions, until told to stop."""

    def __init__(self, base: str, sub_id: str, hook_url: str):
        super().__init__(daemon=True)
        self.base, self.sub_id, self.hook_url = base, sub_id, hook_url
        self.stopping = threading.Event()
        self.created, self.pinged, self.statuses, self.bad = [], [], Counter(), []

    def run(self):
        with requests.Session() as session:
            turn = 0
            while not self.stopping.is_set():
                turn += 1
                if turn % 3:
                    self.call(session, f"/webhooks/{self.sub_id}/ping", None, self.pinged)
                else:
                    body = {"url": self.hook_url, "events": ["*"]}
                    self.call(session, "/webhooks", body, self.created)

    def call(self, session, path, body, acknowledged):
        try:
            response = session.post(f"{self.base}{path}", json=body, headers=HEADERS, timeout=30)
        except requests.RequestException as error:
            self.bad.append(f"POST {path}: no answer ({error})")
            return
        self.statuses[response.status_code] += 1
        try:
            data = response.json()
        except ValueError:
            self.bad.append(f"POST {path}: {response.status_code} not JSON: {response.text[:200]}")
            return
        if response.status_code < 300:
            acknowledged.append(data)
            return
        error = data.get("error") if isinstance(data, dict) else None
        spec = isinstance(error, dict) and {"type", "code", "message", "request_id"} <= set(error)
        if response.status_code != 503 or not spec or "Retry-After" not in response.headers:
            self.bad.append(f"POST {path}: {response.status_code} {response.text[:300]}")
        elif error["code"] != "service_unavailable":
            self.bad.append(f"POST {path}: 503 {error['code']}")


def health_back(base: str) -> float:
    """Seconds until /health answers 200 (each answer meanwhile must be 503 in the spec's body)."""
    started = time.monotonic()
    while time.monotonic() - started < 30:
        try:
            response = requests.get(f"{base}/health", timeout=5)
        except requests.RequestException:
            time.sleep(0.2)
            continue
        if response.status_code == 200:
            return time.monotonic() - started
        assert response.status_code == 503 and response.headers.get("Retry-After"), response.text
        assert response.json()["error"]["code"] == "service_unavailable"
        time.sleep(0.2)
    raise AssertionError("health did not come back within 30 s")


def test_the_service_rides_out_a_fast_and_an_immediate_restart(own_server, tmp_path):
    server, database = own_server
    receiver = WebhookReceiver(tmp_path).__enter__()
    env = {
        **os.environ,
        "SHOP_DATABASE": database,
        # the suite runs with commits that do not wait for their WAL (conftest): an immediate
        # shutdown is a crash, and only commits that waited for it are sure to survive one
        "SHOP_DB_SYNCHRONOUS_COMMIT": "on",
        "SHOP_RATE_LIMIT_CAPACITY": "100000",
        "SHOP_RATE_LIMIT_REFILL": "10000",
        "SHOP_WEBHOOK_TRUSTED_NETWORKS": "127.0.0.0/8",
        "SHOP_WEBHOOK_CA_BUNDLE": receiver.ca_path,
        "SHOP_WEBHOOK_TIMEOUT": "1",
        "SHOP_WEBHOOK_RETRY_DELAYS": "0,0.3,0.3,0.3,0.3,0.3,0.3,0.3",
        "SHOP_CONSUMER_HEARTBEAT_SECONDS": "2",
        "SHOP_LOG_LEVEL": "INFO",
    }
    consumer_log = open(tmp_path / "consumer.log", "w")
    consumer = subprocess.Popen(
        [sys.executable, "-m", "tasks"], cwd=ROOT, env=env, stdout=consumer_log, stderr=subprocess.STDOUT
    )
    try:
        with gunicorn(env, tmp_path / "gunicorn.log", workers=2, threads=4) as base:
            body = {"url": receiver.hook_url(), "events": ["*"]}
            sub = requests.post(f"{base}/webhooks", json=body, headers=HEADERS, timeout=30)
            assert sub.status_code == 201, sub.text
            senders = [Burst(base, sub.json()["id"], receiver.hook_url()) for _ in range(SENDERS)]
            for sender in senders:
                sender.start()
            waits = {}
            for mode in ("fast", "immediate"):
                time.sleep(2)
                server.restart(mode)
                waits[mode] = health_back(base)
            time.sleep(2)
            for sender in senders:
                sender.stopping.set()
            for sender in senders:
                sender.join(60)

            bad = [line for sender in senders for line in sender.bad]
            statuses = sum((sender.statuses for sender in senders), Counter())
            assert bad == [], bad[:10]
            assert set(statuses) <= {201, 202, 503}, statuses
            assert all(wait <= HEALTH_BACK_WITHIN for wait in waits.values()), waits
            created = [item["id"] for sender in senders for item in sender.created]
            pings = [item for sender in senders for item in sender.pinged]
            assert len(created) > 5 and len(pings) > 20, statuses
            # every acknowledged record reads back
            with requests.Session() as session:
                for sub_id in created:
                    read = session.get(f"{base}/webhooks/{sub_id}", headers=HEADERS, timeout=30)
                    assert read.status_code == 200, (sub_id, read.text)
            # every event in the database (each acknowledged ping made one) reaches the receiver
            event_ids = {event.id for event in Event.select(Event.id)}
            acknowledged = {ping["event_id"] for ping in pings}
            assert acknowledged <= event_ids
            delivered = lambda: event_ids <= {item["body"]["id"] for item in receiver.events()}  # noqa: E731
            started = time.monotonic()
            wait_until(delivered, timeout=60, interval=0.5)
            waits["deliveries"] = time.monotonic() - started
            received = Counter(item["body"]["id"] for item in receiver.events())
            assert set(received) <= event_ids  # a duplicate is only ever the same event again
            # nothing was restarted: gunicorn booted its two workers once, the consumer still runs
            booted = re.findall(r"Booting worker with pid", (tmp_path / "gunicorn.log").read_text())
            assert len(booted) == 2, (tmp_path / "gunicorn.log").read_text()[-3000:]
            assert consumer.poll() is None
            print(f"\nhealth back after: {waits}; answers: {dict(statuses)}; events: {len(event_ids)}")
    finally:
        stop(consumer)
        consumer_log.close()
        receiver.__exit__(None, None, None)

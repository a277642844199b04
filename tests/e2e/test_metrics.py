"""Metrics across processes: the real consumer's attempts and sends reach the API's /metrics."""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from shop.domain.activity import run_activity
from shop.models import Message, WebhookDelivery
from tests.helpers import auth_headers
from tests.helpers.messages import ANN_PHONE, shop_fixture
from tests.helpers.metrics import TOKEN, scrape, value
from tests.helpers.processes import ROOT, http_ok, stop, wait_until
from tests.helpers.receivers import free_port
from tests.helpers.webhook_receiver import WebhookReceiver

TRUSTED = "127.0.0.0/8,::1/128"


@pytest.fixture
def shop(load, app, monkeypatch):
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", TRUSTED)
    monkeypatch.setitem(app.config, "METRICS_TOKEN", TOKEN)
    load(shop_fixture(conversations=[{"id": 10, "customer_id": 1}]))
    return auth_headers("sk_test_acme_token_0001")


def consumer_env(receiver) -> dict:
    return {
        "SHOP_METRICS_TOKEN": TOKEN,  # the consumer records only where metrics are on
        "SHOP_WEBHOOK_CA_BUNDLE": receiver.ca_path,
        "SHOP_WEBHOOK_TRUSTED_NETWORKS": TRUSTED,
        "SHOP_WEBHOOK_RETRY_DELAYS": "0,0.3,0.3,0.3,0.3,0.3,0.3,0.3",
        "SHOP_WEBHOOK_TIMEOUT": "2",
    }


def moved(before: dict, after: dict, name: str, **labels) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def test_a_real_delivery_and_a_retry_move_the_attempt_and_delivery_counters(
    client, shop, tmp_path, start_consumer
):
    before = scrape(client)
    with WebhookReceiver(tmp_path, script=[(500, {"error": "down"})]) as receiver:
        created = client.post(
            "/api/v1/webhooks", headers=shop, json={"url": receiver.hook_url(), "events": ["*"]}
        )
        assert created.status_code == 201
        start_consumer(**consumer_env(receiver))
        run_activity("message.received", "acme", {"conversation_id": 10, "channel": "sms", "body": "Hi"})
        wait_until(lambda: WebhookDelivery.get().status == "delivered", timeout=30)
    attempts = ("shop_webhook_attempts_total",)
    after = wait_until(
        lambda: (s := scrape(client)) and moved(before, s, *attempts, outcome="success") == 1 and s,
        timeout=10,
    )
    assert moved(before, after, *attempts, outcome="http_5xx") == 1
    assert moved(before, after, "shop_webhook_deliveries_total", outcome="retrying") == 1
    assert moved(before, after, "shop_webhook_deliveries_total", outcome="delivered") == 1
    latency = "shop_webhook_attempt_duration_seconds_count"
    assert moved(before, after, latency, outcome="success") == 1
    assert moved(before, after, latency, outcome="http_5xx") == 1
    text = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).get_data(as_text=True)
    assert created.get_json()["signing_secret"] not in text and "127.0.0.1" not in text


def test_a_real_send_moves_the_send_counter_by_channel_and_outcome(client, shop, tmp_path, start_consumer):
    before = scrape(client)
    body = {"ticket_id": "1001", "channel": "sms", "content": "Ready!", "to": ANN_PHONE}
    assert client.post("/api/v1/messages/send", headers=shop, json=body).status_code == 202
    start_consumer(SHOP_METRICS_TOKEN=TOKEN)  # no gateway configured: the log provider accepts
    wait_until(lambda: Message.get(Message.direction == "outbound").delivery_status == "logged", timeout=30)
    after = wait_until(
        lambda: (
            (s := scrape(client))
            and moved(before, s, "shop_message_sends_total", channel="sms", outcome="sent")
            and s
        ),
        timeout=10,
    )
    assert moved(before, after, "shop_message_sends_total", channel="sms", outcome="sent") == 1
    assert value(after, "shop_consumers_running") == 1  # the backlog gauges see the consumer's heartbeat


def test_under_gunicorn_every_scrape_adds_up_every_workers_counts(tmp_path):
    port, folder = free_port(), tmp_path / "metrics"
    env = {**os.environ, "SHOP_METRICS_TOKEN": TOKEN, "SHOP_METRICS_DIR": str(folder)}
    log = open(tmp_path / "gunicorn.log", "w")
    command = ["-m", "gunicorn", "-c", "python:shop.gunicorn_conf", "--bind", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(
        [sys.executable, *command, "--workers", "2", "app:app"], cwd=ROOT, env=env, stdout=log, stderr=log
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: http_ok(f"{base}/api/v1/health"), timeout=30)  # another route than the one counted
        with ThreadPoolExecutor(8) as pool:  # side by side, so both sync workers take some
            statuses = list(
                pool.map(lambda _: requests.get(f"{base}/api/v1", timeout=10).status_code, range(60))
            )
        assert statuses == [200] * 60
        counted = []
        for _ in range(6):  # whichever worker answers the scrape, it adds up both
            text = requests.get(
                f"{base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
            ).text
            samples = {
                (s.name, frozenset(s.labels.items())): s.value
                for family in text_string_to_metric_families(text)
                for s in family.samples
            }
            counted.append(
                value(samples, "shop_http_requests_total", route="/api/v1", method="GET", status="200")
            )
    finally:
        stop(proc)
        log.close()
    assert counted == [60.0] * 6
    assert len(list(folder.glob("counter_*.db"))) == 2  # one file per worker

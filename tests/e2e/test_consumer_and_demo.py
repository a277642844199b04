"""The real consumer runs the platform's periodic jobs; the demo command serves the API."""

import json
import os
import subprocess
import sys
from datetime import timedelta

import pytest
import requests

from shop import clock
from shop.models import IdempotencyRecord
from tests.helpers.processes import ROOT, http_ok, stop, wait_until
from tests.helpers.receivers import HttpReceiver, free_port


def test_the_consumer_prunes_expired_idempotency_records(acme, consumer):
    from tasks.maintenance import prune_idempotency_records

    old = clock.now() - timedelta(hours=25)
    IdempotencyRecord.create(
        api_key_id="key_acme", key="old", fingerprint="f", state="completed", locked_until=old, created_at=old
    )
    IdempotencyRecord.create(
        api_key_id="key_acme",
        key="new",
        fingerprint="f",
        state="completed",
        locked_until=clock.now(),
        created_at=clock.now(),
    )
    prune_idempotency_records()  # enqueues the job; the consumer process runs it
    wait_until(lambda: IdempotencyRecord.select().count() == 1)
    assert [r.key for r in IdempotencyRecord.select()] == ["new"]


def test_demo_serves_the_api_with_the_printed_key(tmp_path):
    port = free_port()
    env = dict(os.environ, SHOP_INSTANCE_PATH=str(tmp_path), SHOP_DATABASE=str(tmp_path / "demo.sqlite3"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "app", "shop", "demo", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}/api/v1"
        wait_until(lambda: http_ok(f"{base}/health"), timeout=30)
        headers = {"Authorization": "Bearer sk_test_acme_demo_0001"}
        me = requests.get(f"{base}/me", headers=headers, timeout=5)
        assert me.status_code == 200 and me.json()["tenant_id"] == "acme"
        customers = requests.get(f"{base}/customers", headers=headers, timeout=5).json()
        assert {c["display_name"] for c in customers["data"]} >= {"Ann Lee", "Bo Chen"}
        starter = requests.get(
            f"{base}/me", headers={"Authorization": "Bearer sk_test_globex_demo_0001"}, timeout=5
        )
        assert starter.status_code == 402
        booking_page = requests.get(f"http://127.0.0.1:{port}/book/acme", timeout=10)
        assert booking_page.status_code == 200 and "Book a visit" in booking_page.text
    finally:
        stop(proc)
    output = proc.stdout.read()
    assert "sk_test_acme_demo_0001" in output and "curl" in output
    # the teammates to sign in as and the booking page (issue 27)
    assert "sam@acme.test, password acme-owner-demo" in output and "kim@acme.test" in output
    assert f"http://127.0.0.1:{port}/book/acme" in output


@pytest.mark.sqlite_only  # the demo runs on its own SQLite file whatever the pass
def test_the_demo_with_local_webhooks_delivers_to_a_receiver_on_this_machine(tmp_path):
    """`shop demo --local-webhooks` (issue 23, item 7): an http:// receiver on 127.0.0.1 is accepted
    at create and gets the ping from the demo's own consumer, with no other setting; it says so."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("SHOP_WEBHOOK_")} | {
        "SHOP_INSTANCE_PATH": str(tmp_path),
        "SHOP_DATABASE": str(tmp_path / "demo.sqlite3"),
    }
    command = [sys.executable, "-m", "flask", "--app", "app", "shop", "demo", "--port", str(port)]
    proc = subprocess.Popen(
        command + ["--local-webhooks"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        with HttpReceiver(default=(200, {})) as receiver:
            base = f"http://127.0.0.1:{port}/api/v1"
            wait_until(lambda: http_ok(f"{base}/health"), timeout=30)
            headers = {"Authorization": "Bearer sk_test_acme_demo_0001"}
            body = {"url": f"http://127.0.0.1:{receiver.port}/hook", "events": ["*"]}
            created = requests.post(f"{base}/webhooks", json=body, headers=headers, timeout=10)
            assert created.status_code == 201, created.text
            ping = requests.post(f"{base}/webhooks/{created.json()['id']}/ping", headers=headers, timeout=10)
            assert ping.status_code in (200, 202), ping.text
            wait_until(lambda: any(r["path"] == "/hook" for r in receiver.requests), timeout=30)
            event = json.loads(receiver.requests[0]["body"])
            assert event["type"] == "webhook.ping"
            assert receiver.requests[0]["headers"]["Service-Signature"].startswith("t=")
    finally:
        stop(proc)
    assert "receivers on this machine are allowed" in proc.stdout.read()


@pytest.mark.sqlite_only
def test_the_demo_without_local_webhooks_says_how_to_allow_them(tmp_path):
    """Without the flag the demo names it, and an http:// receiver is refused naming the setting."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("SHOP_WEBHOOK_")} | {
        "SHOP_INSTANCE_PATH": str(tmp_path),
        "SHOP_DATABASE": str(tmp_path / "demo.sqlite3"),
    }
    command = [sys.executable, "-m", "flask", "--app", "app", "shop", "demo", "--port", str(port)]
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        base = f"http://127.0.0.1:{port}/api/v1"
        wait_until(lambda: http_ok(f"{base}/health"), timeout=30)
        headers = {"Authorization": "Bearer sk_test_acme_demo_0001"}
        body = {"url": "http://127.0.0.1:9/hook", "events": ["*"]}
        refused = requests.post(f"{base}/webhooks", json=body, headers=headers, timeout=10)
        assert refused.status_code == 400 and "SHOP_WEBHOOK_ALLOW_HTTP" in refused.json()["error"]["message"]
    finally:
        stop(proc)
    assert "--local-webhooks" in proc.stdout.read()

"""The real consumer runs the delivery pruning, and refuses to start with a window below the spec's."""

import os
import subprocess
import sys
from datetime import timedelta

from shop import clock
from shop.models import WebhookDelivery
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.processes import ROOT, wait_until

HEADERS = auth_headers("sk_test_acme_token_0001")


def test_the_consumer_prunes_old_terminal_deliveries(app, client, load, start_consumer, monkeypatch):
    from tasks.maintenance import prune_webhook_deliveries

    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", "127.0.0.0/8")
    load(tenant_fixture("acme"))
    body = {"url": "https://127.0.0.1:9/hooks", "events": ["*"]}
    sub = client.post("/api/v1/webhooks", headers=HEADERS, json=body).get_json()
    old, new = [
        client.post(f"/api/v1/webhooks/{sub['id']}/ping", headers=HEADERS).get_json()["id"] for _ in "ab"
    ]
    long_ago = clock.now() - timedelta(days=31)
    WebhookDelivery.update(status="dead", updated_at=long_ago).where(WebhookDelivery.id == old).execute()
    WebhookDelivery.update(status="delivered").where(WebhookDelivery.id == new).execute()
    start_consumer()
    prune_webhook_deliveries()  # enqueues the job; the consumer process runs it
    wait_until(lambda: WebhookDelivery.select().count() == 1)
    assert [d.id for d in WebhookDelivery.select()] == [new]


def test_the_consumer_refuses_a_window_below_the_spec(app):
    env = {**os.environ, "SHOP_RETENTION_DELIVERY_DAYS": "3"}
    result = subprocess.run(
        [sys.executable, "-m", "tasks"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert (
        "the consumer will not start: SHOP_RETENTION_DELIVERY_DAYS must be at least 7 days" in result.stderr
    )

"""rotate-secret-key while deliveries flow: a real consumer, a real receiver, no attempt lost to the key."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shop.domain.activity import run_activity
from shop.models import WebhookDelivery, WebhookDeliveryAttempt, WebhookSubscription
from shop.platform import secretbox
from tests.helpers import tenant_fixture
from tests.helpers.processes import ROOT, wait_until
from tests.helpers.webhook_receiver import WebhookReceiver, verify

TRUSTED = "127.0.0.0/8,::1/128"


@pytest.fixture
def shop(load, app, monkeypatch):
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", TRUSTED)
    load(tenant_fixture("acme", customers=[{"id": 1, "display_name": "Ann"}], conversations=[{"id": 10}]))
    return {"Authorization": "Bearer sk_test_acme_token_0001"}


def inbound(n: int) -> None:
    run_activity("message.received", "acme", {"conversation_id": 10, "channel": "sms", "body": f"Hi {n}"})


def test_rotation_while_deliveries_flow_loses_no_attempt(app, client, shop, tmp_path, start_consumer):
    instance = tmp_path / "instance"
    instance.mkdir()
    old_key = app.config["SECRET_KEY"]  # what this process encrypted the subscription's secret with
    (instance / "secret_key").write_text(old_key + "\n")
    # the consumer and the command take the key from the instance's key file, as an install does
    keyed = {"SHOP_INSTANCE_PATH": str(instance), "SHOP_SECRET_KEY": ""}
    with WebhookReceiver(tmp_path) as receiver:
        body = {"url": receiver.hook_url(), "events": ["message.received"]}
        sub = client.post("/api/v1/webhooks", headers=shop, json=body).get_json()
        start_consumer(
            SHOP_WEBHOOK_CA_BUNDLE=receiver.ca_path,
            SHOP_WEBHOOK_TRUSTED_NETWORKS=TRUSTED,
            SHOP_WEBHOOK_RETRY_DELAYS="0,0.5,0.5,0.5,0.5,0.5,0.5,0.5",
            **keyed,
        )
        inbound(0)
        wait_until(lambda: len(receiver.events()) == 1, timeout=60)
        command = subprocess.Popen(
            [sys.executable, "-m", "flask", "--app", "app", "shop", "rotate-secret-key"],
            cwd=ROOT,
            env={**os.environ, **keyed},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        sent = 1
        while command.poll() is None:  # events keep coming all through the rotation
            inbound(sent)
            sent += 1
            time.sleep(0.1)
        out, err = command.communicate()
        assert command.returncode == 0, err
        for n in range(5):  # and after it, signed with the secret as re-encrypted
            inbound(sent + n)
        sent += 5
        wait_until(lambda: len(receiver.events()) >= sent, timeout=90)
        received = receiver.events()
    assert sent > 20, "the rotation took a few seconds, with deliveries flowing throughout"
    assert len(received) == sent and len({e["body"]["id"] for e in received}) == sent
    for event in received:  # every one signed with the subscription's secret, whatever key opened it
        assert verify(event["headers"]["Service-Signature"], event["raw"], [sub["signing_secret"]])
    statuses = [d.status for d in WebhookDelivery.select()]
    assert statuses == ["delivered"] * sent
    assert WebhookDeliveryAttempt.select().where(WebhookDeliveryAttempt.status != "succeeded").count() == 0
    new_key = (instance / "secret_key").read_text().strip()
    assert new_key != old_key and (instance / "secret_key.previous").read_text().split() == [old_key]
    stored = WebhookSubscription.get().secret_encrypted
    assert secretbox.under_current_key(stored, (new_key,))
    log = (Path(os.environ["SHOP_INSTANCE_PATH"]) / "consumer-0.log").read_text()
    assert "another instance secret key" not in log and "Traceback" not in log

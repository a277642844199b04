"""Inbound messaging end to end with real processes: gunicorn takes Twilio-signed forms, gateway-
signed JSON and a raw email post, `shop mail-in` takes a real SMTP client; the consumer delivers
each message.received to a webhook receiver, once, however often the provider retries."""

import json
import os
import smtplib
import subprocess
import sys
import time
from collections import Counter
from email.message import EmailMessage
from urllib.parse import urlencode

import pytest
import requests

from shop.models import Message, Notification
from tests.e2e.test_webhook_delivery import TRUSTED, consumer_env, subscribe
from tests.helpers import tenant_fixture
from tests.helpers.messages import ANN_PHONE, shop_fixture
from tests.helpers.processes import ROOT, stop, wait_until
from tests.helpers.receivers import free_port
from tests.helpers.servers import gunicorn
from tests.helpers.webhook_receiver import WebhookReceiver
from tests.inbound.conftest import (
    GATEWAY_SECRET,
    SHOP_NUMBER,
    TWILIO_TOKEN,
    gateway_signature,
    twilio_signature,
)

PUBLIC_URL = "https://shop.example.com"
EMAIL_TOKEN = "e2e-inbound-email-token"
SETTINGS = {
    "SHOP_SMS_GATEWAY_SECRET": GATEWAY_SECRET,
    "SHOP_TWILIO_AUTH_TOKEN": TWILIO_TOKEN,
    "SHOP_PUBLIC_URL": PUBLIC_URL,
    "SHOP_INBOUND_EMAIL_TOKEN": EMAIL_TOKEN,
}


def email(message_id: str, body: str) -> EmailMessage:
    message = EmailMessage()
    message["From"], message["To"], message["Message-ID"] = "ann@example.com", "hello@acme.test", message_id
    message["Subject"] = "Re: repair"
    message.set_content(body)
    return message


@pytest.mark.sqlite_only
def test_every_provider_reaches_the_api_the_inbox_and_a_webhook_once(
    client, load, app, tmp_path, start_consumer
):
    load(shop_fixture(sms_numbers=[SHOP_NUMBER], inbound_email="hello@acme.test"), tenant_fixture("globex"))
    app.config["WEBHOOK_TRUSTED_NETWORKS"] = TRUSTED
    headers = {"Authorization": "Bearer sk_test_acme_token_0001"}
    env = {**os.environ, **SETTINGS}
    port = free_port()
    mail_in = subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "app", "shop", "mail-in", "--listen", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=open(tmp_path / "mail-in.log", "w"),
        stderr=subprocess.STDOUT,
    )
    try:
        with WebhookReceiver(tmp_path) as receiver, gunicorn(env, tmp_path / "gunicorn.log") as base:
            subscribe(client, headers, receiver, events=("message.received",))
            start_consumer(**consumer_env(receiver))
            root = base.removesuffix("/api/v1")
            form = {
                "MessageSid": "SM1",
                "From": ANN_PHONE,
                "To": SHOP_NUMBER,
                "Body": "Twilio hello",
                "NumMedia": "0",
            }
            signature = twilio_signature(PUBLIC_URL + "/inbound/sms/twilio", form)
            gateway = json.dumps(
                {"id": "gw1", "from": ANN_PHONE, "to": SHOP_NUMBER, "body": "Gateway hello"}
            ).encode()
            raw = email("<e1@example.com>", "Email hello").as_bytes()
            for _ in range(2):  # every provider retries once
                twilio = requests.post(
                    root + "/inbound/sms/twilio",
                    data=urlencode(form),
                    timeout=10,
                    headers={
                        "X-Twilio-Signature": signature,
                        "Content-Type": "application/x-www-form-urlencoded",
                    },
                )
                assert twilio.status_code == 200 and twilio.headers["Content-Type"].startswith("text/xml")
                answer = requests.post(
                    root + "/inbound/sms/gateway",
                    data=gateway,
                    timeout=10,
                    headers={
                        "Service-Signature": gateway_signature(gateway),
                        "Content-Type": "application/json",
                    },
                )
                assert answer.status_code == 200, answer.text
                posted = requests.post(
                    root + "/inbound/email",
                    data=raw,
                    timeout=10,
                    headers={"Authorization": f"Bearer {EMAIL_TOKEN}", "Content-Type": "message/rfc822"},
                )
                assert posted.status_code == 200, posted.text
            refused = requests.post(
                root + "/inbound/sms/gateway",
                data=gateway,
                timeout=10,
                headers={"Service-Signature": "t=1,v1=00", "Content-Type": "application/json"},
            )
            assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
            wait_until(lambda: _smtp_ready(port), timeout=20)
            with smtplib.SMTP("127.0.0.1", port, timeout=10) as smtp:
                smtp.send_message(email("<e2@example.com>", "SMTP hello"))
                smtp.send_message(email("<e2@example.com>", "SMTP hello"))
                with pytest.raises(smtplib.SMTPRecipientsRefused):
                    smtp.send_message(email("<e3@example.com>", "x"), to_addrs=["nobody@acme.test"])
            wait_until(lambda: len(receiver.events()) >= 4, timeout=30)
            time.sleep(0.5)  # anything sent twice would arrive now
            received = receiver.events()
            conversation = requests.get(base + "/messages/conversations", headers=headers, timeout=10).json()[
                "data"
            ][0]
            inbox = requests.get(base + "/notifications", headers=headers, timeout=10).json()["data"]
    finally:
        stop(mail_in)
    bodies = Counter(item["body"]["data"]["body"] for item in received)
    assert bodies == {"Twilio hello": 1, "Gateway hello": 1, "Email hello": 1, "SMTP hello": 1}
    assert conversation["unread_count"] == 4 and Message.select().count() == 4
    assert [n["type"] for n in inbox] == ["message_received"] * 4 and Notification.select().count() == 4


def _smtp_ready(port: int) -> bool:
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=2) as smtp:
            return smtp.noop()[0] == 250
    except OSError:
        return False

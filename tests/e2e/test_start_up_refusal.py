"""Real processes refuse to start when the stored secrets do not open with the configured key, or
when a setting is bad, and say which setting or file to fix."""

import os
import subprocess
import sys

import pytest

from tests.helpers.processes import CONSUMERS, ROOT
from tests.helpers.receivers import free_port
from tests.helpers.webhooks import create as create_webhook

OTHER_KEY = "a-key-from-some-other-instance-0123456789"


def run(argv: list, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )


def gunicorn() -> list:
    return [sys.executable, "-m", "gunicorn", "-c", "python:shop.gunicorn_conf", "--workers", "1"] + [
        "--bind",
        f"127.0.0.1:{free_port()}",
        "app:app",
    ]


@pytest.fixture
def subscribed(client, acme):
    assert create_webhook(client, acme).status_code == 201


@pytest.mark.parametrize("command", CONSUMERS)
def test_the_consumer_refuses_a_key_that_does_not_open_the_secrets(subscribed, command):
    done = run(CONSUMERS[command], SHOP_SECRET_KEY=OTHER_KEY)
    assert done.returncode == 1
    assert "the consumer will not start: stored secrets (webhook signing secrets) cannot be decrypted" in (
        done.stderr
    )
    assert "SHOP_SECRET_KEY" in done.stderr and OTHER_KEY not in done.stderr


def test_gunicorn_refuses_to_serve_with_a_key_that_does_not_open_the_secrets(subscribed):
    done = run(gunicorn(), SHOP_SECRET_KEY=OTHER_KEY)
    assert done.returncode != 0
    assert "SecretKeyMismatch: stored secrets (webhook signing secrets) cannot be decrypted" in done.stderr


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"SHOP_TRUSTED_PROXIES": "-1"}, "SHOP_TRUSTED_PROXIES must be a whole number from 0 to 10"),
        ({"SHOP_TRUSTED_PROXIES": "one"}, "SHOP_TRUSTED_PROXIES must be a whole number from 0 to 10"),
        ({"SHOP_LOG_FORMAT": "yaml"}, "SHOP_LOG_FORMAT must be text or json, not 'yaml'"),
        (
            {"SHOP_SMS_PROVIDER": "twilio", "SHOP_TWILIO_AUTH_TOKEN": "a-token"},
            "SHOP_SMS_PROVIDER=twilio needs SHOP_TWILIO_ACCOUNT_SID and SHOP_TWILIO_AUTH_TOKEN",
        ),
    ],
    ids=["negative proxies", "proxies not a number", "an unknown log format", "twilio without its account"],
)
def test_a_bad_setting_stops_the_consumer_and_gunicorn(app, env, says):
    for command in CONSUMERS.values():
        consumer = run(command, **env)
        assert consumer.returncode == 1 and f"the consumer will not start: {says}" in consumer.stderr
    served = run(gunicorn(), **env)
    assert served.returncode != 0 and f"ConfigError: {says}" in served.stderr

"""Fixtures the API tests share."""

import pytest

from tests.helpers.webhook_receiver import WebhookReceiver


@pytest.fixture
def start_receiver(tmp_path, app, monkeypatch):
    """Start real HTTPS webhook receivers (WebhookReceiver's options: script, default, ...); the
    app's engine trusts their CA. Each is stopped when the test ends."""
    opened = []

    def start(**kwargs):
        receiver = WebhookReceiver(tmp_path, **kwargs).__enter__()
        opened.append(receiver)
        monkeypatch.setitem(app.config, "WEBHOOK_CA_BUNDLE", receiver.ca_path)
        return receiver

    yield start
    for receiver in opened:
        receiver.__exit__(None, None, None)

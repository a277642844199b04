"""The request log: one line per request (text by default, JSON with SHOP_LOG_FORMAT=json), no secrets."""

import io
import json
import logging

import pytest

from shop.config import ConfigError
from shop.platform import logs
from tests.helpers import auth_headers
from tests.helpers.webhooks import create as create_webhook
from tests.helpers.webhooks import rotate as rotate_webhook

FIELDS = {"time", "level", "logger", "message", "request_id", "tenant", "api_key_id", "method", "route"}
FIELDS |= {"status", "duration_ms", "client"}


@pytest.fixture
def captured():
    """What the service logs, as an operator's handler on the root logger receives it (DEBUG up)."""
    streams = {}

    def capture(fmt: str) -> io.StringIO:
        stream = streams[fmt] = io.StringIO()
        handler = logs.make_handler(fmt, stream)
        logging.getLogger().addHandler(handler)
        handlers.append(handler)
        return stream

    handlers: list = []
    shop_logger = logging.getLogger("shop")
    level = shop_logger.level
    shop_logger.setLevel(logging.DEBUG)
    yield capture
    shop_logger.setLevel(level)
    for handler in handlers:
        logging.getLogger().removeHandler(handler)


def request_lines(stream: io.StringIO) -> list[dict]:
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    return [line for line in lines if line["logger"] == "shop.request"]


def test_a_json_line_per_request_carries_the_request_id_of_the_response(client, acme, captured):
    stream = captured("json")
    answers = [
        client.get("/api/v1/me", headers=acme),
        client.get("/api/v1/notifications/424242", headers=acme),
        client.get("/api/v1/me", headers=auth_headers("sk_test_wrong")),
        client.get("/api/v1/no-such-route", headers=acme),
        client.post("/api/v1/webhooks", headers=acme, data="{", content_type="application/json"),
    ]
    lines = request_lines(stream)
    assert [line["request_id"] for line in lines] == [a.headers["X-Request-Id"] for a in answers]
    assert [line["status"] for line in lines] == [a.status_code for a in answers] == [200, 404, 401, 404, 400]
    me, missing, refused, unknown, bad_json = lines
    assert set(me) == FIELDS
    assert me["tenant"] == "acme" and me["api_key_id"] == "key_acme"
    assert me["method"] == "GET" and me["route"] == "/api/v1/me" and me["client"] == "127.0.0.1"
    assert isinstance(me["duration_ms"], float) and me["duration_ms"] >= 0 and me["level"] == "INFO"
    assert me["time"].endswith("+00:00")
    assert missing["route"] == "/api/v1/notifications/<id>"  # the template, not the path
    assert refused["tenant"] is None and refused["api_key_id"] is None
    assert unknown["route"] is None
    assert bad_json["method"] == "POST" and bad_json["route"] == "/api/v1/webhooks"


def test_the_text_line_is_readable(client, acme, captured):
    stream = captured("text")
    response = client.get("/api/v1/me", headers=acme)
    line = next(x for x in stream.getvalue().splitlines() if " shop.request: " in x)
    assert " INFO shop.request: GET /api/v1/me 200 " in line
    assert response.headers["X-Request-Id"] in line
    assert "tenant=acme key=key_acme client=127.0.0.1" in line


def test_no_token_or_signing_secret_ever_reaches_the_log(client, acme, captured):
    json_stream, text_stream = captured("json"), captured("text")
    sub = create_webhook(client, acme).get_json()
    secret = sub["signing_secret"]
    rotated = rotate_webhook(client, acme, sub["id"]).get_json()
    assert rotate_webhook(client, acme, sub["id"]).headers["Idempotent-Replayed"] == "true"
    client.get("/api/v1/me", headers=auth_headers("sk_live_stolen_token_1234"))
    client.get("/api/v1/me?token=sk_test_acme_token_0001", headers=auth_headers("not-even-a-key-shape-9"))
    logging.getLogger("shop.test").warning("oops %s / %s", secret, "Bearer sk_test_acme_token_0001")
    logged = json_stream.getvalue() + text_stream.getvalue()
    assert request_lines(json_stream), "the requests were logged"
    for value in (secret, rotated["signing_secret"], "sk_test_acme_token_0001", "sk_live_stolen_token_1234"):
        assert value not in logged
    assert "not-even-a-key-shape-9" not in logged  # no header is logged, whatever its shape
    assert "whsec_[redacted]" in logged and "Bearer [redacted]" in logged


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("LOG_FORMAT", "xml", "SHOP_LOG_FORMAT must be text or json, not 'xml'"),
        ("LOG_FORMAT", 1, "SHOP_LOG_FORMAT must be text or json, not 1"),
        ("LOG_LEVEL", "LOUD", "SHOP_LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, not 'LOUD'"),
        ("LOG_LEVEL", 10, "SHOP_LOG_LEVEL must be one of"),
    ],
    ids=["an unknown format", "a number for the format", "an unknown level", "a number for the level"],
)
def test_a_bad_log_setting_refuses_to_start(app_with, setting, value, message):
    with pytest.raises(ConfigError, match=message):
        app_with(**{setting: value})


def test_the_periodic_task_chatter_is_debug(captured):
    stream = captured("text")
    logs.configure({"LOG_LEVEL": "INFO", "LOG_FORMAT": "text"})
    scheduler = logging.getLogger("huey.consumer.Scheduler")
    level = scheduler.level
    try:
        scheduler.setLevel(logging.INFO)
        scheduler.info("Enqueueing periodic task %s.", "tasks.webhooks.sweep_webhooks")
        assert "Enqueueing periodic task" not in stream.getvalue()
        scheduler.setLevel(logging.DEBUG)
        scheduler.info("Enqueueing periodic task %s.", "tasks.webhooks.sweep_webhooks")
        assert " DEBUG huey.consumer.Scheduler: Enqueueing periodic task" in stream.getvalue()
    finally:
        scheduler.setLevel(level)

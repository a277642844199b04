"""Retention: rows older than their window go and newer ones stay, a delivery that is not terminal is
never pruned, each transaction deletes at most a batch, and windows below the spec's are refused."""

from datetime import timedelta

import pytest
from flask import Config

from shop import clock
from shop.domain import retention
from shop.domain.webhooks import engine
from shop.models import Event, IdempotencyRecord, UsageLog, WebhookDelivery, WebhookDeliveryAttempt
from tests.helpers import auth_headers, tenant_fixture

HEADERS = auth_headers("sk_test_acme_token_0001")
DAY = timedelta(days=1)


@pytest.fixture
def subscription(load, app, client, monkeypatch):
    """acme with a subscription to a closed loopback port (every attempt fails fast)."""
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", "127.0.0.0/8")
    load(tenant_fixture("acme"))
    body = {"url": "https://127.0.0.1:9/hooks", "events": ["*"]}
    return client.post("/api/v1/webhooks", headers=HEADERS, json=body).get_json()["id"]


def delivery(client, app, sub_id: str, status: str, age: timedelta) -> str:
    """A ping's delivery with one attempt in its log, then set to `status` and last touched `age` ago."""
    delivery_id = client.post(f"/api/v1/webhooks/{sub_id}/ping", headers=HEADERS).get_json()["id"]
    engine.attempt(delivery_id, app.config)  # refused: an attempt row, the delivery retrying
    then = clock.now() - age
    WebhookDelivery.update(status=status, updated_at=then, created_at=then).where(
        WebhookDelivery.id == delivery_id
    ).execute()
    Event.update(created=then).where(Event.id == WebhookDelivery.get_by_id(delivery_id).event_id).execute()
    return delivery_id


def test_terminal_deliveries_past_the_window_go_with_their_attempts_and_events(client, app, subscription):
    gone = [
        delivery(client, app, subscription, status, 31 * DAY) for status in ("delivered", "dead", "failed")
    ]
    young = delivery(client, app, subscription, "dead", 29 * DAY)
    in_flight = [delivery(client, app, subscription, status, 400 * DAY) for status in ("pending", "retrying")]
    kept = [young, *in_flight]
    assert WebhookDeliveryAttempt.select().count() == 6

    assert sum(retention.prune_deliveries(30 * DAY, 1000)) == 3
    assert sum(retention.prune_events(30 * DAY, 1000)) == 3

    assert {d.id for d in WebhookDelivery.select()} == set(kept)
    assert {a.delivery_id for a in WebhookDeliveryAttempt.select()} == set(kept)
    assert {e.id for e in Event.select()} == {WebhookDelivery.get_by_id(d).event_id for d in kept}
    assert not set(gone) & {d.id for d in WebhookDelivery.select()}


def test_a_recent_event_without_deliveries_stays(client, app, subscription):
    old = delivery(client, app, subscription, "dead", 31 * DAY)
    client.post(f"/api/v1/webhooks/{subscription}/ping", headers=HEADERS)  # a new event, its delivery pending
    WebhookDelivery.delete().where(WebhookDelivery.id != old).execute()  # now referred to by none
    WebhookDeliveryAttempt.delete().execute()
    assert list(retention.prune_deliveries(30 * DAY, 1000)) == [1]
    assert list(retention.prune_events(30 * DAY, 1000)) == [1]
    assert Event.select().count() == 1 and Event.get().created > clock.now() - DAY


def test_each_batch_deletes_at_most_the_batch_size(client, app, subscription):
    for _ in range(5):
        delivery(client, app, subscription, "dead", 31 * DAY)
    assert list(retention.prune_deliveries(30 * DAY, 2)) == [2, 2, 1]
    now_ms = clock.epoch_ms()
    UsageLog.insert_many(
        [
            {
                "tenant_id": "acme",
                "api_key_id": "key_acme",
                "method": "GET",
                "path": "/api/v1/me",
                "status": 200,
            }
            | {"duration_ms": 1, "created_ms": now_ms - days * 86_400_000}
            for days in (91, 92, 93, 94, 95, 96, 89)
        ]
    ).execute()
    assert list(retention.prune_usage(90 * DAY, 3)) == [3, 3, 0]
    old = UsageLog.select().where(UsageLog.created_ms < now_ms - 86_400_000)  # not the pings' own rows
    assert [row.created_ms for row in old] == [now_ms - 89 * 86_400_000]


def test_idempotency_records_past_the_window_go(client, acme):
    for key, hours in (("old", 25), ("older", 49), ("new", 23)):
        at = clock.now() - timedelta(hours=hours)
        IdempotencyRecord.create(
            api_key_id="key_acme", key=key, fingerprint="f", state="completed", locked_until=at, created_at=at
        )
    assert sum(retention.prune_idempotency(timedelta(hours=24), 1)) == 2
    assert [r.key for r in IdempotencyRecord.select()] == ["new"]


def test_failure_tallies_of_past_minutes_go_and_the_current_ones_stay(client):
    """Issue 23, item 5: auth_failure no longer grows a row per address for ever."""
    from shop.models import AuthFailure

    minute = int(clock.timestamp() // 60)
    ages = {"10.0.0.1": 0, "10.0.0.2": 1, "10.0.0.3": 2, "10.0.0.4": 60 * 24 * 30, "10.0.0.5": 5}
    AuthFailure.insert_many(
        [{"ip": ip, "minute": minute - age, "count": 3} for ip, age in ages.items()]
    ).execute()
    assert list(retention.prune_auth_failures(2)) == [2, 1]
    assert sorted(row.ip for row in AuthFailure.select()) == ["10.0.0.1", "10.0.0.2"]


def test_the_maintenance_task_prunes_failure_tallies(client):
    from shop.models import AuthFailure
    from tasks.maintenance import prune_auth_failures

    AuthFailure.create(ip="10.0.0.9", minute=int(clock.timestamp() // 60) - 10, count=1)
    assert prune_auth_failures.call_local() == 1 and AuthFailure.select().count() == 0


def test_the_blocked_set_query_reads_an_index(client):
    """The query every process runs once a second finds this minute's rows by index, not by a scan."""
    from shop.db import db, on_postgres
    from shop.platform.auth_failures import BLOCKED_SQL

    indexes = {tuple(index.columns) for index in db.get_indexes("auth_failure")}
    assert ("minute", "count") in indexes
    if not on_postgres():  # PostgreSQL's planner rightly scans a tiny table; the index is there
        plan = " ".join(
            str(row)
            for row in db.execute_sql(
                "EXPLAIN QUERY PLAN " + str(BLOCKED_SQL).replace(":minute", "1").replace(":limit", "3")
            )
        )
        assert "USING COVERING INDEX auth_failure_minute_count" in plan or "USING INDEX" in plan, plan


def config(**settings) -> Config:
    values = Config(".")
    values.update(IDEMPOTENCY_RETENTION_SECONDS=24 * 3600, **settings)
    return values


def test_the_defaults():
    assert retention.windows(config()) == retention.Windows(
        deliveries=30 * DAY, usage=90 * DAY, idempotency=timedelta(hours=24), batch_size=1000
    )


ACCEPTED = [
    pytest.param({"RETENTION_DELIVERY_DAYS": 7.5}, {"deliveries": 7.5 * DAY}, id="half days are fine"),
    pytest.param({"USAGE_RETENTION_DAYS": 120}, {"usage": 120 * DAY}, id="the older usage name is read"),
    pytest.param(
        {"USAGE_RETENTION_DAYS": 120, "RETENTION_USAGE_DAYS": 60}, {"usage": 60 * DAY}, id="the new name wins"
    ),
    pytest.param({"RETENTION_IDEMPOTENCY_HOURS": "72"}, {"idempotency": 3 * DAY}, id="a string of a number"),
    pytest.param({"RETENTION_BATCH_SIZE": 50}, {"batch_size": 50}, id="a batch size"),
]


@pytest.mark.parametrize("settings, expected", ACCEPTED)
def test_settings_that_are_accepted(settings, expected):
    windows = retention.windows(config(**settings))
    assert {name: getattr(windows, name) for name in expected} == expected


DELIVERIES, BATCH = "RETENTION_DELIVERY_DAYS", "RETENTION_BATCH_SIZE"
IDEMPOTENCY = "RETENTION_IDEMPOTENCY_HOURS"
REFUSED = [
    pytest.param({DELIVERIES: 6}, DELIVERIES, id="deliveries under 7 days"),
    pytest.param({"RETENTION_USAGE_DAYS": 29}, "RETENTION_USAGE_DAYS", id="usage under 30 days"),
    pytest.param(
        {"USAGE_RETENTION_DAYS": 1}, "USAGE_RETENTION_DAYS", id="usage under 30 days by its older name"
    ),
    pytest.param(
        {"RETENTION_IDEMPOTENCY_HOURS": 23}, "RETENTION_IDEMPOTENCY_HOURS", id="idempotency under 24 h"
    ),
    pytest.param({DELIVERIES: "a month"}, DELIVERIES, id="words"),
    pytest.param({DELIVERIES: [30]}, DELIVERIES, id="a list"),
    pytest.param({DELIVERIES: True}, DELIVERIES, id="a boolean"),
    pytest.param({DELIVERIES: float("nan")}, DELIVERIES, id="NaN"),
    pytest.param({BATCH: 0}, BATCH, id="a batch of nothing"),
    pytest.param({BATCH: 2.5}, BATCH, id="half a row"),
]


@pytest.mark.parametrize("settings, named", REFUSED)
def test_settings_that_are_refused_name_themselves(settings, named):
    with pytest.raises(retention.RetentionError, match=f"SHOP_{named} must be"):
        retention.windows(config(**settings))

"""Issue 17 through the API: one delivery, its attempt log, recover, stats, 410 and Retry-After,
operator notices in the inbox. Attempts run in this process against a real HTTPS receiver."""

from datetime import timedelta

import pytest

from shop import clock
from shop.domain.activity import run_activity
from shop.domain.webhooks import engine, etiquette, recovery
from shop.models import (
    Notification,
    WebhookDelivery,
    WebhookDeliveryAttempt,
    WebhookRecovery,
    WebhookSubscription,
)
from tasks import huey
from tests.helpers import assert_error, auth_headers, tenant_fixture

TRUSTED = "127.0.0.0/8"


@pytest.fixture
def shop(load, app, monkeypatch):
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", TRUSTED)
    monkeypatch.setitem(app.config, "WEBHOOK_RETRY_DELAYS", "0,0,0,0,0,0,0,0")
    load(
        tenant_fixture(
            "acme", customers=[{"id": 1, "display_name": "Ann"}], conversations=[{"id": 10, "customer_id": 1}]
        ),
        tenant_fixture("globex"),
    )
    return auth_headers("sk_test_acme_token_0001")


def subscribe(client, headers, url="https://127.0.0.1:9/hooks") -> dict:
    response = client.post("/api/v1/webhooks", headers=headers, json={"url": url, "events": ["*"]})
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def inbound(body="Hi"):
    return run_activity("message.received", "acme", {"conversation_id": 10, "channel": "sms", "body": body})


def attempts_of(client, headers, sub_id, delivery_id, query=""):
    response = client.get(
        f"/api/v1/webhooks/{sub_id}/deliveries/{delivery_id}/attempts{query}", headers=headers
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def test_a_500_then_200_delivery_shows_both_attempts(client, shop, app, start_receiver):
    hook = start_receiver(script=[(500, {"error": "down"}, {"X-Request-Id": "rcv-1", "Set-Cookie": "s=1"})])
    sub = subscribe(client, shop, hook.hook_url())
    inbound()
    delivery_id = WebhookDelivery.get().id
    assert engine.attempt(delivery_id, app.config) == 0
    assert engine.attempt(delivery_id, app.config) is None
    one = client.get(f"/api/v1/webhooks/{sub['id']}/deliveries/{delivery_id}", headers=shop).get_json()
    assert one["object"] == "webhook_delivery" and one["status"] == "delivered" and one["attempts"] == 2
    log = attempts_of(client, shop, sub["id"], delivery_id)
    first, second = log["data"]
    assert log["object"] == "list" and log["has_more"] is False
    assert [a["number"] for a in log["data"]] == [1, 2]
    assert [a["trigger"] for a in log["data"]] == ["initial", "retry"]
    assert (first["status"], first["response_status"], second["status"], second["response_status"]) == (
        "failed",
        500,
        "succeeded",
        200,
    )
    assert first["object"] == "webhook_delivery_attempt" and first["id"].startswith("whatt_")
    assert first["response_body"] == '{"error": "down"}' and first["error"] is None
    assert (
        first["response_headers"]["X-Request-Id"] == "rcv-1" and "Set-Cookie" not in first["response_headers"]
    )
    assert first["address"] == "127.0.0.1" and first["duration_ms"] >= 0 and first["finished_at"]
    sent = hook.events()[0]["headers"]
    assert first["request_headers"]["Service-Signature"] == sent["Service-Signature"]
    assert first["request_headers"]["Service-Event-Id"] == one["event_id"]


def test_the_attempt_log_pages_oldest_first(client, shop, app, start_receiver):
    hook = start_receiver(default=(503, {"error": "busy"}))
    sub = subscribe(client, shop, hook.hook_url())
    inbound()
    delivery_id = WebhookDelivery.get().id
    for _ in range(3):
        engine.attempt(delivery_id, app.config)
    page = attempts_of(client, shop, sub["id"], delivery_id, "?limit=2")
    rest = attempts_of(client, shop, sub["id"], delivery_id, f"?limit=2&cursor={page['next_cursor']}")
    assert [a["number"] for a in page["data"] + rest["data"]] == [1, 2, 3]
    assert page["has_more"] is True and rest["has_more"] is False


def test_the_body_kept_is_the_first_2_kb(client, shop, app, start_receiver):
    hook = start_receiver(default=(500, {"text": "x" * 5000}))
    sub = subscribe(client, shop, hook.hook_url())
    inbound()
    delivery_id = WebhookDelivery.get().id
    engine.attempt(delivery_id, app.config)
    (attempt,) = attempts_of(client, shop, sub["id"], delivery_id)["data"]
    assert len(attempt["response_body"]) == 2048 and attempt["response_body"].startswith('{"text": "xxx')
    assert len(WebhookDelivery.get().response_excerpt) == 500


def test_an_attempt_is_written_as_started_before_the_request_and_counts(client, shop, app):
    sub = subscribe(client, shop)
    inbound()
    delivery = WebhookDelivery.get()
    # what a worker killed mid-request leaves behind: the claim and the started attempt, no outcome
    started = engine.start_attempt(delivery.id, app.config)
    assert started is not None
    row = WebhookDeliveryAttempt.get()
    assert row.status == "started" and row.finished_at is None and row.number == 1
    assert row.request_headers["Service-Event-Id"] == delivery.event_id
    assert WebhookDelivery.get().attempts == 1
    WebhookDelivery.update(claimed_until=clock.now() - timedelta(seconds=1)).execute()  # the hold ran out
    engine.attempt(delivery.id, app.config)  # the next worker: nothing listens on port 9
    log = attempts_of(client, shop, sub["id"], delivery.id)["data"]
    assert [(a["number"], a["status"]) for a in log] == [(1, "interrupted"), (2, "failed")]
    assert log[0]["error"].startswith("interrupted") and log[1]["error"].startswith("network error")
    assert WebhookDelivery.get().attempts == 2


def test_a_blocked_target_is_an_attempt_with_its_error(client, shop, app, monkeypatch):
    sub = subscribe(client, shop)
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", "")
    inbound()
    delivery_id = WebhookDelivery.get().id
    assert engine.attempt(delivery_id, app.config) is None
    (attempt,) = attempts_of(client, shop, sub["id"], delivery_id)["data"]
    assert attempt["error"].startswith("blocked target") and attempt["address"] is None
    assert attempt["response_status"] is None and WebhookDelivery.get().status == "dead"


def test_redeliver_starts_a_run_whose_first_attempt_says_so(client, shop, app, start_receiver):
    hook = start_receiver()
    sub = subscribe(client, shop, hook.hook_url())
    inbound()
    delivery_id = WebhookDelivery.get().id
    engine.attempt(delivery_id, app.config)
    client.post(f"/api/v1/webhooks/{sub['id']}/deliveries/{delivery_id}/redeliver", headers=shop)
    engine.attempt(delivery_id, app.config)
    log = attempts_of(client, shop, sub["id"], delivery_id)["data"]
    assert [(a["number"], a["trigger"]) for a in log] == [(1, "initial"), (1, "redeliver")]


def test_delivery_and_attempts_of_another_tenant_or_subscription_are_404(client, shop):
    sub = subscribe(client, shop)
    other = subscribe(client, shop)
    inbound()
    delivery = WebhookDelivery.get(WebhookDelivery.subscription == sub["id"])
    globex = auth_headers("sk_test_globex_token_0001")
    for suffix in ("", "/attempts"):
        for path, headers, param in [
            (f"/api/v1/webhooks/{sub['id']}/deliveries/whd_nope0000{suffix}", shop, "delivery_id"),
            (f"/api/v1/webhooks/{other['id']}/deliveries/{delivery.id}{suffix}", shop, "delivery_id"),
            (f"/api/v1/webhooks/{sub['id']}/deliveries/{delivery.id}{suffix}", globex, "id"),
        ]:
            assert_error(client.get(path, headers=headers), 404, "not_found", param)


# Receiver etiquette


def test_a_410_disables_the_subscription_at_once(client, shop, app, start_receiver):
    hook = start_receiver(default=(410, {"error": "gone"}))
    sub = subscribe(client, shop, hook.hook_url())
    inbound("first")
    inbound("queued behind it")
    first, second = WebhookDelivery.select().order_by(WebhookDelivery.created_at, WebhookDelivery.id)
    assert engine.attempt(first.id, app.config) is None
    body = client.get(f"/api/v1/webhooks/{sub['id']}", headers=shop).get_json()
    assert body["enabled"] is False and body["disabled_at"] is not None and "410 Gone" in body["last_error"]
    assert {d.status for d in WebhookDelivery.select()} == {"dead"}
    assert engine.attempt(second.id, app.config) is None and len(hook.events()) == 1
    notice = Notification.get(Notification.type == "webhook_disabled")
    assert notice.scope == "global" and notice.tenant_id == "acme"
    assert notice.details == {
        "subscription_id": sub["id"],
        "url": sub["url"],
        "reason": "gone",
        "delivery_id": first.id,
    }


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_seconds_moves_the_next_attempt(client, shop, app, start_receiver, status):
    hook = start_receiver(script=[(status, {"slow": "down"}, {"Retry-After": "120"})])
    subscribe(client, shop, hook.hook_url())
    inbound()
    delivery_id = WebhookDelivery.get().id
    before = clock.now()
    assert engine.attempt(delivery_id, app.config) == 120
    delivery = WebhookDelivery.get()
    assert delivery.status == "retrying" and delivery.next_attempt_at >= before + timedelta(seconds=120)
    assert engine.attempt(delivery_id, app.config) is None and len(hook.events()) == 1  # not due yet
    clock.advance(121)
    assert engine.attempt(delivery_id, app.config) is None
    assert WebhookDelivery.get().status == "delivered" and WebhookDelivery.get().attempts == 2


def test_retry_after_is_ignored_on_other_statuses_and_never_shortens_the_table(
    client, shop, app, start_receiver, monkeypatch
):
    monkeypatch.setitem(app.config, "WEBHOOK_RETRY_DELAYS", "0,300,300,300,300,300,300,300")
    hook = start_receiver(script=[(500, {}, {"Retry-After": "900"}), (503, {}, {"Retry-After": "5"})])
    subscribe(client, shop, hook.hook_url())
    inbound()
    delivery_id = WebhookDelivery.get().id
    assert engine.attempt(delivery_id, app.config) == 300
    clock.advance(301)
    assert engine.attempt(delivery_id, app.config) == 300


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("30", 30.0),
        ("0", 0.0),
        ("999999999999999", 86400.0),
        (" 7 ", 7.0),
        ("soon", None),
        ("-5", None),
        ("1.5", None),
        ("", None),
        (None, None),
    ],
    ids=lambda v: repr(v),
)
def test_retry_after_values(value, expected):
    assert etiquette.retry_after_seconds(value) == expected


def test_retry_after_as_an_http_date_is_capped_at_a_day():
    soon = clock.now() + timedelta(seconds=90)
    assert 85 <= etiquette.retry_after_seconds(soon.strftime("%a, %d %b %Y %H:%M:%S GMT")) <= 90
    later = clock.now() + timedelta(days=3)
    assert etiquette.retry_after_seconds(later.strftime("%a, %d %b %Y %H:%M:%S GMT")) == 86400
    assert etiquette.retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0


# Operator notices


def test_the_first_dead_delivery_of_a_day_notifies_once(client, shop, app, monkeypatch):
    sub = subscribe(client, shop)
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", "")  # blocked: dead at the first attempt
    for i in range(3):
        inbound(f"m{i}")
    for delivery in list(WebhookDelivery.select()):
        engine.attempt(delivery.id, app.config)
    notices = list(Notification.select().where(Notification.type == "webhook_delivery_dead"))
    assert len(notices) == 1 and notices[0].details["subscription_id"] == sub["id"]
    assert notices[0].scope == "global" and notices[0].details["event_type"] == "message.received"
    clock.advance(24 * 3600)
    inbound("tomorrow")
    engine.attempt(WebhookDelivery.get(WebhookDelivery.status == "pending").id, app.config)
    assert Notification.select().where(Notification.type == "webhook_delivery_dead").count() == 2
    listed = client.get("/api/v1/notifications", headers=shop).get_json()["data"]
    assert {n["type"] for n in listed} == {"webhook_delivery_dead"}


def test_an_auto_disable_notifies_the_inbox(client, shop, app):
    sub = subscribe(client, shop)
    inbound("old")
    old = WebhookDelivery.get()
    WebhookDelivery.update(status="dead", created_at=clock.now() - timedelta(days=8)).execute()
    assert engine.maybe_auto_disable(WebhookSubscription.get_by_id(sub["id"])) is True
    assert engine.maybe_auto_disable(WebhookSubscription.get_by_id(sub["id"])) is False
    (notice,) = Notification.select().where(Notification.type == "webhook_disabled")
    assert notice.details == {"subscription_id": sub["id"], "url": sub["url"], "reason": "auto_disabled"}
    assert old.id


# Recover


def _finished(status, age_hours):
    """A delivery of a new event, finished with `status`, created `age_hours` ago."""
    inbound(f"{status} {age_hours}")
    delivery = WebhookDelivery.select().order_by(WebhookDelivery.created_at.desc()).first()
    created = clock.now() - timedelta(hours=age_hours)
    WebhookDelivery.update(status=status, attempts=8, created_at=created, next_attempt_at=None).where(
        WebhookDelivery.id == delivery.id
    ).execute()
    return delivery.id


def test_recover_dry_run_counts_and_changes_nothing(client, shop):
    sub = subscribe(client, shop)
    dead, failed = _finished("dead", 2), _finished("failed", 3)
    _finished("delivered", 2), _finished("dead", 30)
    huey.flush()
    since = clock.isoformat(clock.now() - timedelta(hours=24))
    response = client.post(
        f"/api/v1/webhooks/{sub['id']}/recover", headers=shop, json={"since": since, "dry_run": True}
    )
    assert response.status_code == 202, response.get_data(as_text=True)
    body = response.get_json()
    assert body["object"] == "webhook_recovery" and body["count"] == 2 and body["dry_run"] is True
    assert body["statuses"] == ["dead", "failed"] and body["status"] == "completed"
    assert huey.pending_count() == 0
    assert {WebhookDelivery.get_by_id(i).status for i in (dead, failed)} == {"dead", "failed"}


def test_recover_requeues_exactly_the_window_in_batches(client, shop):
    sub = subscribe(client, shop)
    inside = [_finished("dead", 5 + i / 10) for i in range(5)]
    outside = [_finished("dead", 48), _finished("delivered", 5), _finished("failed", 0.01)]
    huey.flush()
    since, until = clock.now() - timedelta(hours=24), clock.now() - timedelta(hours=1)
    body = client.post(
        f"/api/v1/webhooks/{sub['id']}/recover",
        headers=shop,
        json={"since": clock.isoformat(since), "until": clock.isoformat(until), "statuses": ["dead"]},
    ).get_json()
    assert body["count"] == 5 and body["status"] == "running"
    conflict = client.post(
        f"/api/v1/webhooks/{sub['id']}/recover", headers=shop, json={"since": clock.isoformat(since)}
    )
    assert_error(conflict, 409, "recovery_in_progress")
    assert recovery.run_batch(body["id"], batch_size=2) is True
    assert recovery.run_batch(body["id"], batch_size=2) is True
    assert recovery.run_batch(body["id"], batch_size=2) is False
    assert all(WebhookDelivery.get_by_id(i).status == "pending" for i in inside)
    assert all(WebhookDelivery.get_by_id(i).run_trigger == "recover" for i in inside)
    assert all(WebhookDelivery.get_by_id(i).attempts == 0 for i in inside)
    assert [WebhookDelivery.get_by_id(i).status for i in outside] == ["dead", "delivered", "failed"]
    done = WebhookRecovery.get_by_id(body["id"])
    assert done.status == "completed" and done.requeued == 5 and done.running is None
    again = client.post(
        f"/api/v1/webhooks/{sub['id']}/recover", headers=shop, json={"since": clock.isoformat(since)}
    )
    assert again.status_code == 202  # the first one finished: a new one may start


def test_recover_honours_the_idempotency_key(client, shop):
    sub = subscribe(client, shop)
    _finished("dead", 1)
    headers = {**shop, "Idempotency-Key": "recover-0001"}
    payload = {"since": clock.isoformat(clock.now() - timedelta(hours=2))}
    first = client.post(f"/api/v1/webhooks/{sub['id']}/recover", headers=headers, json=payload)
    second = client.post(f"/api/v1/webhooks/{sub['id']}/recover", headers=headers, json=payload)
    assert first.status_code == second.status_code == 202
    assert first.get_json() == second.get_json()
    assert WebhookRecovery.select().count() == 1


def test_recover_on_a_disabled_subscription_is_422(client, shop):
    sub = subscribe(client, shop)
    client.patch(f"/api/v1/webhooks/{sub['id']}", headers=shop, json={"enabled": False})
    response = client.post(
        f"/api/v1/webhooks/{sub['id']}/recover", headers=shop, json={"since": "2026-01-01T00:00:00Z"}
    )
    assert_error(response, 422, "subscription_disabled")
    assert WebhookRecovery.select().count() == 0


def test_recover_of_another_tenants_subscription_is_404(client, shop):
    sub = subscribe(client, shop)
    globex = auth_headers("sk_test_globex_token_0001")
    response = client.post(
        f"/api/v1/webhooks/{sub['id']}/recover", headers=globex, json={"since": "2026-01-01T00:00:00Z"}
    )
    assert_error(response, 404, "not_found", "id")


# Stats


def test_stats_match_the_attempts_made(client, shop, app, start_receiver):
    hook = start_receiver(script=[(500, {}), (500, {})])
    sub = subscribe(client, shop, hook.hook_url())
    for i in range(3):
        inbound(f"m{i}")
    for delivery in list(WebhookDelivery.select()):
        while engine.attempt(delivery.id, app.config) is not None:
            pass
    rows = list(WebhookDeliveryAttempt.select())
    body = client.get(f"/api/v1/webhooks/{sub['id']}/stats?window=24h", headers=shop).get_json()
    assert body["object"] == "webhook_endpoint_stats" and body["window"] == "24h"
    assert (body["attempts"], body["delivered"], body["failed"]) == (5, 3, 2)
    assert body["success_rate"] == 0.6
    durations = sorted(row.duration_ms for row in rows)
    assert body["p50_response_ms"] == durations[2] and body["p95_response_ms"] == durations[4]
    successes = [r.started_at for r in rows if r.status == "succeeded"]
    failures = [r.started_at for r in rows if r.status == "failed"]
    assert body["last_success_at"] == clock.isoformat(max(successes))
    assert body["last_failure_at"] == clock.isoformat(max(failures))


def test_stats_windows_leave_older_attempts_out(client, shop, app, start_receiver):
    hook = start_receiver()
    sub = subscribe(client, shop, hook.hook_url())
    inbound()
    engine.attempt(WebhookDelivery.get().id, app.config)
    WebhookDeliveryAttempt.update(started_at=clock.now() - timedelta(days=2)).execute()
    day = client.get(f"/api/v1/webhooks/{sub['id']}/stats", headers=shop).get_json()
    week = client.get(f"/api/v1/webhooks/{sub['id']}/stats?window=7d", headers=shop).get_json()
    assert day["window"] == "24h" and day["attempts"] == 0 and day["success_rate"] is None
    assert day["p50_response_ms"] is None and day["last_success_at"] is None
    assert week["attempts"] == 1 and week["success_rate"] == 1.0


@pytest.mark.parametrize(
    ("method", "path", "scope"),
    [
        ("get", "/deliveries/whd_x00000000", "webhooks.read"),
        ("get", "/deliveries/whd_x00000000/attempts", "webhooks.read"),
        ("get", "/stats", "webhooks.read"),
        ("post", "/recover", "webhooks.write"),
    ],
    ids=lambda v: v,
)
def test_each_new_route_requires_its_scope(client, load, shop, method, path, scope):
    sub = subscribe(client, shop)
    load(tenant_fixture("ro", scopes=[s for s in ("webhooks.read", "webhooks.write") if s != scope]))
    kwargs = {"json": {"since": "2026-01-01T00:00:00Z"}} if method == "post" else {}
    response = getattr(client, method)(
        f"/api/v1/webhooks/{sub['id']}{path}", headers=auth_headers("sk_test_ro_token_0001"), **kwargs
    )
    error = assert_error(response, 403, "insufficient_scope")
    assert error["details"] == {"required_scope": scope}

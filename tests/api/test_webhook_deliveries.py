"""Deliveries of a subscription: fan-out, list, summary, redeliver, auto-disable, engine rules."""

import ipaddress
from datetime import timedelta

import pytest

from shop import clock
from shop.domain.activity import run_activity
from shop.domain.webhooks import engine
from shop.models import Event, WebhookDelivery, WebhookSubscription
from shop.platform.errors import ApiError
from tasks import huey
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.webhook_receiver import WebhookReceiver

TRUSTED = "127.0.0.0/8"


@pytest.fixture
def shop(load, app, monkeypatch):
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", TRUSTED)
    load(
        tenant_fixture(
            "acme", customers=[{"id": 1, "display_name": "Ann"}], conversations=[{"id": 10, "customer_id": 1}]
        ),
        tenant_fixture("globex"),
    )
    return auth_headers("sk_test_acme_token_0001")


def subscribe(client, headers, url="https://127.0.0.1:9/hooks", events=("*",)) -> dict:
    response = client.post("/api/v1/webhooks", headers=headers, json={"url": url, "events": list(events)})
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def inbound(body="Hi"):
    return run_activity("message.received", "acme", {"conversation_id": 10, "channel": "sms", "body": body})


def test_an_event_becomes_one_delivery_per_matching_enabled_subscription(client, shop):
    everything = subscribe(client, shop)
    messages = subscribe(client, shop, events=["message.received"])
    subscribe(client, shop, events=["ticket.created"])
    disabled = subscribe(client, shop)
    client.patch(f"/api/v1/webhooks/{disabled['id']}", headers=shop, json={"enabled": False})
    inbound()
    event = Event.get(Event.type == "message.received")
    rows = WebhookDelivery.select().where(WebhookDelivery.event == event.id)
    assert {row.subscription_id for row in rows} == {everything["id"], messages["id"]}
    assert all(row.status == "pending" and row.payload["id"] == event.id for row in rows)
    assert huey.pending_count() == 2  # enqueued once the transaction committed


def test_a_failed_change_queues_nothing(client, shop):
    subscribe(client, shop)
    with pytest.raises(ApiError):
        run_activity("message.received", "acme", {"conversation_id": 999, "channel": "sms", "body": "x"})
    assert WebhookDelivery.select().count() == 0 and huey.pending_count() == 0


def test_events_while_disabled_are_not_queued_when_re_enabled(client, shop):
    sub = subscribe(client, shop)
    client.patch(f"/api/v1/webhooks/{sub['id']}", headers=shop, json={"enabled": False})
    inbound("while disabled")
    client.patch(f"/api/v1/webhooks/{sub['id']}", headers=shop, json={"enabled": True})
    assert WebhookDelivery.select().count() == 0
    inbound("after")
    assert WebhookDelivery.select().count() == 1


def test_deliveries_list_newest_first_and_paginated(client, shop):
    sub = subscribe(client, shop)
    for i in range(3):
        inbound(f"m{i}")
        clock.advance(1)
    body = client.get(f"/api/v1/webhooks/{sub['id']}/deliveries?limit=2", headers=shop).get_json()
    assert body["object"] == "list" and len(body["data"]) == 2 and body["has_more"] is True
    rest = client.get(
        f"/api/v1/webhooks/{sub['id']}/deliveries?limit=2&cursor={body['next_cursor']}", headers=shop
    ).get_json()
    items = body["data"] + rest["data"]
    assert [d["created_at"] for d in items] == sorted((d["created_at"] for d in items), reverse=True)
    assert all(d["id"].startswith("whd_") and d["object"] == "webhook_delivery" for d in items)


def _set(delivery_id, **fields):
    WebhookDelivery.update(**fields).where(WebhookDelivery.id == delivery_id).execute()


def test_summary_counts_every_status(client, shop):
    sub = subscribe(client, shop)
    for i in range(6):
        inbound(f"m{i}")
    ids = [d.id for d in WebhookDelivery.select().order_by(WebhookDelivery.id)]
    now = clock.now()
    _set(ids[0], status="delivered", delivered_at=now - timedelta(hours=1), last_attempt_at=now)
    _set(ids[1], status="delivered", delivered_at=now - timedelta(hours=2))
    _set(ids[2], status="retrying")
    _set(ids[3], status="dead")
    _set(ids[4], status="failed")
    body = client.get(f"/api/v1/webhooks/{sub['id']}/deliveries/summary", headers=shop).get_json()
    assert body == {
        "object": "webhook_delivery_summary",
        "subscription_id": sub["id"],
        "total": 6,
        "counts": {"pending": 1, "retrying": 1, "delivered": 2, "failed": 1, "dead": 1},
        "pending": 2,
        "last_delivered_at": clock.isoformat(now - timedelta(hours=1)),
        "last_attempt_at": clock.isoformat(now),
    }


def test_summary_of_a_subscription_without_deliveries(client, shop):
    sub = subscribe(client, shop)
    body = client.get(f"/api/v1/webhooks/{sub['id']}/deliveries/summary", headers=shop).get_json()
    assert body["total"] == 0 and body["pending"] == 0
    assert body["last_delivered_at"] is None and body["last_attempt_at"] is None


@pytest.mark.parametrize("status", ["delivered", "dead", "failed"])
def test_redeliver_requeues_a_finished_delivery_with_the_same_payload(client, shop, status):
    sub = subscribe(client, shop)
    inbound()
    delivery = WebhookDelivery.get()
    _set(delivery.id, status=status, attempts=8)
    huey.flush()
    response = client.post(f"/api/v1/webhooks/{sub['id']}/deliveries/{delivery.id}/redeliver", headers=shop)
    assert response.status_code == 202
    body = response.get_json()
    assert body["id"] == delivery.id and body["status"] == "pending" and body["attempts"] == 0
    again = WebhookDelivery.get_by_id(delivery.id)
    assert again.payload == delivery.payload and again.event_id == delivery.event_id
    assert huey.pending_count() == 1


@pytest.mark.parametrize("status", ["pending", "retrying"])
def test_redeliver_of_a_delivery_in_flight_is_422(client, shop, status):
    sub = subscribe(client, shop)
    inbound()
    delivery = WebhookDelivery.get()
    _set(delivery.id, status=status)
    response = client.post(f"/api/v1/webhooks/{sub['id']}/deliveries/{delivery.id}/redeliver", headers=shop)
    assert_error(response, 422, "delivery_in_flight")


def test_redeliver_on_a_disabled_subscription_is_422(client, shop):
    sub = subscribe(client, shop)
    inbound()
    delivery = WebhookDelivery.get()
    client.patch(f"/api/v1/webhooks/{sub['id']}", headers=shop, json={"enabled": False})
    response = client.post(f"/api/v1/webhooks/{sub['id']}/deliveries/{delivery.id}/redeliver", headers=shop)
    assert_error(response, 422, "subscription_disabled")


def test_redeliver_of_unknown_or_foreign_deliveries_is_404(client, shop, load):
    sub = subscribe(client, shop)
    other = subscribe(client, shop)
    inbound()
    delivery = WebhookDelivery.get(WebhookDelivery.subscription == sub["id"])
    _set(delivery.id, status="dead")
    globex = auth_headers("sk_test_globex_token_0001")
    for path, headers, param in [
        (f"/api/v1/webhooks/{sub['id']}/deliveries/whd_nope/redeliver", shop, "delivery_id"),
        (f"/api/v1/webhooks/{other['id']}/deliveries/{delivery.id}/redeliver", shop, "delivery_id"),
        (f"/api/v1/webhooks/whsub_nope/deliveries/{delivery.id}/redeliver", shop, "id"),
        (f"/api/v1/webhooks/{sub['id']}/deliveries/{delivery.id}/redeliver", globex, "id"),
    ]:
        assert_error(client.post(path, headers=headers), 404, "not_found", param)
    assert WebhookDelivery.get_by_id(delivery.id).status == "dead"


def test_deliveries_endpoints_need_their_scopes(client, shop, load):
    sub = subscribe(client, shop)
    load(tenant_fixture("ro", scopes=["webhooks.read"]))
    headers = auth_headers("sk_test_ro_token_0001")
    response = client.post(f"/api/v1/webhooks/{sub['id']}/deliveries/whd_x/redeliver", headers=headers)
    assert_error(response, 403, "insufficient_scope")


def test_a_delivery_waiting_when_its_subscription_is_disabled_ends_dead(client, shop, app):
    sub = subscribe(client, shop)
    inbound()
    WebhookSubscription.update(enabled=False).execute()  # disabled behind the API's back
    assert engine.attempt(WebhookDelivery.get().id, app.config) is None
    delivery = WebhookDelivery.get()
    assert delivery.status == "dead" and delivery.attempts == 1 and sub["id"] == delivery.subscription_id


def test_auto_disable_after_seven_days_of_permanent_failures(client, shop, app, tmp_path, monkeypatch):
    with WebhookReceiver(tmp_path, default=(500, {"error": "gone"})) as receiver:
        monkeypatch.setitem(app.config, "WEBHOOK_CA_BUNDLE", receiver.ca_path)
        monkeypatch.setitem(app.config, "WEBHOOK_RETRY_DELAYS", "0,0,0,0,0,0,0,0")
        sub = subscribe(client, shop, url=receiver.hook_url())
        inbound("eight days ago")
        old = WebhookDelivery.get()
        _set(old.id, status="dead", created_at=clock.now() - timedelta(days=8), attempts=8)
        inbound("now")
        inbound("queued behind it")  # stays pending until the subscription is disabled
        current = list(
            WebhookDelivery.select().where(WebhookDelivery.id != old.id).order_by(WebhookDelivery.id)
        )
        first = current[0].id
        for _ in range(8):
            engine.attempt(first, app.config)
    subscription = WebhookSubscription.get_by_id(sub["id"])
    assert WebhookDelivery.get_by_id(first).status == "dead"
    assert subscription.enabled is False and subscription.disabled_at is not None
    assert subscription.last_error.startswith("Disabled automatically")
    assert all(d.status == "dead" for d in WebhookDelivery.select())  # pending ones dead-lettered
    listed = client.get(f"/api/v1/webhooks/{sub['id']}", headers=shop).get_json()
    assert listed["enabled"] is False and listed["disabled_at"] is not None


def test_no_auto_disable_while_failures_are_younger_than_seven_days(client, shop, app, tmp_path, monkeypatch):
    with WebhookReceiver(tmp_path, default=(500, {"error": "gone"})) as receiver:
        monkeypatch.setitem(app.config, "WEBHOOK_CA_BUNDLE", receiver.ca_path)
        monkeypatch.setitem(app.config, "WEBHOOK_RETRY_DELAYS", "0,0,0,0,0,0,0,0")
        sub = subscribe(client, shop, url=receiver.hook_url())
        inbound()
        delivery_id = WebhookDelivery.get().id
        for _ in range(8):
            engine.attempt(delivery_id, app.config)
    assert WebhookDelivery.get_by_id(delivery_id).status == "dead"
    assert WebhookSubscription.get_by_id(sub["id"]).enabled is True


def test_a_recent_success_prevents_auto_disable(client, shop):
    sub = subscribe(client, shop)
    inbound("old failure")
    inbound("recent success")
    old, recent = list(WebhookDelivery.select().order_by(WebhookDelivery.id))
    _set(old.id, status="dead", created_at=clock.now() - timedelta(days=9))
    _set(recent.id, status="delivered", delivered_at=clock.now() - timedelta(days=1))
    assert engine.maybe_auto_disable(WebhookSubscription.get_by_id(sub["id"])) is False


def test_a_dns_failure_is_a_retryable_network_error(client, shop, app):
    from shop.domain.webhooks.transport import NetworkError, vetted_address

    with pytest.raises(NetworkError, match="^dns: "):
        vetted_address("bad..name", 443)  # refused by the resolver itself, no query leaves the host
    subscribe(client, shop)
    WebhookSubscription.update(url="https://bad..name/hook").execute()
    inbound()
    assert engine.attempt(WebhookDelivery.get().id, app.config) is not None
    delivery = WebhookDelivery.get()
    assert delivery.status == "retrying" and delivery.last_error.startswith("dns: ")
    assert delivery.last_status_code is None and delivery.next_attempt_at is not None


def test_a_refused_connection_is_a_network_error_not_a_timeout(app):
    from shop.domain.webhooks.transport import NetworkError, post
    from tests.helpers.receivers import free_port

    closed = free_port()  # nothing listens there: the connection is refused at once
    with pytest.raises(NetworkError) as refused:
        post(
            f"https://127.0.0.1:{closed}/hook",
            b"{}",
            {},
            timeout=5,
            trusted_networks=[ipaddress.ip_network("127.0.0.0/8")],
        )
    assert str(refused.value).startswith("network error: ConnectionRefusedError")
    assert "127.0.0.1" not in str(refused.value)  # the address stays out of the recorded error


def test_redirects_are_not_followed(client, shop, app, tmp_path, monkeypatch):
    with WebhookReceiver(tmp_path, default=(302, {"moved": True})) as receiver:
        monkeypatch.setitem(app.config, "WEBHOOK_CA_BUNDLE", receiver.ca_path)
        subscribe(client, shop, url=receiver.hook_url())
        inbound()
        engine.attempt(WebhookDelivery.get().id, app.config)
        assert len(receiver.events()) == 1
    delivery = WebhookDelivery.get()
    assert delivery.status == "retrying" and delivery.last_status_code == 302


def test_the_body_sent_is_the_body_signed_and_the_stored_envelope(client, shop, app, tmp_path, monkeypatch):
    from tests.helpers.webhook_receiver import verify

    with WebhookReceiver(tmp_path) as receiver:
        monkeypatch.setitem(app.config, "WEBHOOK_CA_BUNDLE", receiver.ca_path)
        sub = subscribe(client, shop, url=receiver.hook_url())
        inbound("é and ✓")  # non-ASCII text must survive signing byte for byte
        engine.attempt(WebhookDelivery.get().id, app.config)
        item = receiver.events()[0]
    assert verify(item["headers"]["Service-Signature"], item["raw"], [sub["signing_secret"]])
    assert item["body"] == WebhookDelivery.get().payload
    assert item["body"]["data"]["body"] == "é and ✓"


def test_a_later_success_clears_the_subscriptions_last_error(client, shop, app, tmp_path, monkeypatch):
    script = [(503, {"error": "busy"})]
    with WebhookReceiver(tmp_path, script=script) as receiver:
        monkeypatch.setitem(app.config, "WEBHOOK_CA_BUNDLE", receiver.ca_path)
        monkeypatch.setitem(app.config, "WEBHOOK_RETRY_DELAYS", "0,0,0,0,0,0,0,0")
        sub = subscribe(client, shop, url=receiver.hook_url())
        inbound()
        delivery_id = WebhookDelivery.get().id
        engine.attempt(delivery_id, app.config)
        failed = client.get(f"/api/v1/webhooks/{sub['id']}", headers=shop).get_json()
        engine.attempt(delivery_id, app.config)
        assert len(receiver.events()) == 2
    assert failed["last_error"] == "HTTP 503"
    assert WebhookDelivery.get_by_id(delivery_id).status == "delivered"
    assert client.get(f"/api/v1/webhooks/{sub['id']}", headers=shop).get_json()["last_error"] is None


@pytest.mark.parametrize("status", ["pending", "delivered", "dead"])
def test_the_deliveries_list_filters_by_status(client, shop, status):
    """Issue 23, item 9: `?status=dead` used to answer every delivery."""
    sub = subscribe(client, shop)
    for _ in range(3):
        inbound()
    rows = list(WebhookDelivery.select().order_by(WebhookDelivery.id))
    WebhookDelivery.update(status="delivered").where(WebhookDelivery.id == rows[0].id).execute()
    WebhookDelivery.update(status="dead").where(WebhookDelivery.id == rows[1].id).execute()
    listed = client.get(f"/api/v1/webhooks/{sub['id']}/deliveries?status={status}", headers=shop).get_json()
    assert [item["status"] for item in listed["data"]] == [status]


def test_an_unknown_delivery_status_is_invalid_query(client, shop):
    sub = subscribe(client, shop)
    response = client.get(f"/api/v1/webhooks/{sub['id']}/deliveries?status=lost", headers=shop)
    assert_error(response, 400, "invalid_query", "status")

"""Webhook subscriptions: create, read, change, delete, rotate the secret, ping, event types."""

import logging
import re
from datetime import datetime, timedelta

import pytest

from shop import clock
from shop.domain.events.catalog import EVENT_TYPES
from shop.domain.webhooks.subscriptions import signing_secrets
from shop.models import Event, WebhookDelivery, WebhookSubscription
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.backends import database_dump
from tests.helpers.webhooks import URL, create, rotate

SUBSCRIPTION_FIELDS = {
    "object",
    "id",
    "url",
    "description",
    "enabled",
    "events",
    "api_version",
    "last_error",
    "disabled_at",
    "created_at",
    "updated_at",
}
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


@pytest.fixture
def sub(client, acme):
    """A subscription of acme to ticket.created; returns its create response body."""
    return create(client, acme).get_json()


def add_delivery(sub_id: str, status: str) -> WebhookDelivery:
    """A delivery in a given status, as the engine of the next issue would leave it."""
    sub = WebhookSubscription.get_by_id(sub_id)
    event = Event.create(
        id=f"evt_{status}_{sub_id[-6:]}",
        tenant=sub.tenant_id,
        type="ticket.created",
        data={"object": "ticket", "id": "1"},
    )
    return WebhookDelivery.create(
        id=f"whd_{status}_{sub_id[-6:]}",
        tenant=sub.tenant_id,
        subscription=sub_id,
        event=event.id,
        event_type=event.type,
        payload={},
        status=status,
    )


# create and read


def test_create_returns_the_subscription_and_its_secret_once(client, acme):
    response = create(client, acme, description="Front desk tablet")
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == SUBSCRIPTION_FIELDS | {"signing_secret"}
    assert re.match(r"^whsub_[0-9a-f]{24}$", body["id"])
    assert re.match(r"^whsec_[A-Za-z0-9_-]{43}$", body["signing_secret"])
    assert body["object"] == "webhook_subscription"
    assert body["url"] == URL and body["events"] == ["ticket.created"]
    assert body["description"] == "Front desk tablet"
    assert body["enabled"] is True and body["last_error"] is None and body["disabled_at"] is None
    assert body["api_version"] == "2026-11-01"
    assert TIMESTAMP.match(body["created_at"]) and body["created_at"] == body["updated_at"]


def test_ids_and_secrets_are_unguessable(client, acme):
    bodies = [create(client, acme).get_json() for _ in range(3)]
    assert len({b["id"] for b in bodies}) == 3 and len({b["signing_secret"] for b in bodies}) == 3


def test_retrieve_and_list_never_show_the_secret(client, acme, sub):
    one = client.get(f"/api/v1/webhooks/{sub['id']}", headers=acme).get_json()
    assert set(one) == SUBSCRIPTION_FIELDS
    assert one == {k: v for k, v in sub.items() if k != "signing_secret"}
    listing = client.get("/api/v1/webhooks", headers=acme).get_json()
    assert listing["object"] == "list" and listing["data"] == [one]
    assert listing["has_more"] is False and listing["next_cursor"] is None


def test_the_list_is_newest_first_and_paginated(client, acme):
    ids = []
    for _ in range(3):
        ids.append(create(client, acme).get_json()["id"])
        clock.advance(1)
    first = client.get("/api/v1/webhooks?limit=2", headers=acme).get_json()
    assert [s["id"] for s in first["data"]] == ids[::-1][:2] and first["has_more"] is True
    second = client.get(f"/api/v1/webhooks?limit=2&cursor={first['next_cursor']}", headers=acme).get_json()
    assert [s["id"] for s in second["data"]] == ids[:1] and second["has_more"] is False


def test_another_tenants_subscription_is_a_404_like_a_missing_one(client, load, sub):
    load(tenant_fixture("globex", token="sk_test_globex_token_0001"))
    other = auth_headers("sk_test_globex_token_0001")
    base = f"/api/v1/webhooks/{sub['id']}"
    assert client.get("/api/v1/webhooks", headers=other).get_json()["data"] == []
    for response in (
        client.get(base, headers=other),
        client.delete(base, headers=other),
        client.patch(base, json={"enabled": False}, headers=other),
        client.post(f"{base}/ping", headers=other),
        rotate(client, other, sub["id"]),
    ):
        error = assert_error(response, 404, "not_found", "id")
        assert sub["id"] in error["message"]
    missing = assert_error(
        client.get("/api/v1/webhooks/whsub_000000000000000000000000", headers=other), 404, "not_found", "id"
    )
    assert missing["message"].replace("whsub_000000000000000000000000", sub["id"]) == error["message"]
    assert WebhookSubscription.get_by_id(sub["id"]).enabled is True


@pytest.mark.parametrize(
    "raw",
    ["whsub_nope", "123", "x" * 300, "whsub_" + "a" * 100, "%00", "whsub_%00"],
    ids=[
        "an unknown id",
        "a number",
        "a very long id",
        "a too long whsub id",
        "a NUL byte",
        "a NUL after whsub_",
    ],
)
def test_unknown_ids_are_404(client, acme, raw):
    assert_error(client.get(f"/api/v1/webhooks/{raw}", headers=acme), 404, "not_found", "id")


# api_version and Service-Version


@pytest.mark.parametrize(
    "header,expected",
    [(None, "2026-11-01"), ("2026-11-01", "2026-11-01"), ("2027-03-15", "2026-11-01")],
    ids=["absent means the newest", "an exact version", "a later date pins the newest before it"],
)
def test_api_version_comes_from_service_version(client, acme, header, expected):
    headers = {**acme, **({"Service-Version": header} if header else {})}
    assert create(client, headers).get_json()["api_version"] == expected


@pytest.mark.parametrize(
    "header",
    ["2020-01-01", "v1", "2026-02-30", "2026-11-1", ""],
    ids=["a date before the first version", "not a date", "an impossible date", "an unpadded date", "empty"],
)
def test_an_unusable_service_version_is_400(client, acme, header):
    response = create(client, {**acme, "Service-Version": header})
    assert_error(response, 400, "invalid_field", "Service-Version")
    assert WebhookSubscription.select().count() == 0


# update


def test_patch_changes_only_the_fields_given(client, acme, sub):
    clock.advance(5)
    response = client.patch(
        f"/api/v1/webhooks/{sub['id']}",
        headers=acme,
        json={"description": "New", "events": ["*"], "url": "https://b.example.com/h"},
    )
    body = response.get_json()
    assert response.status_code == 200 and "signing_secret" not in body
    assert (
        body["description"] == "New" and body["events"] == ["*"] and body["url"] == "https://b.example.com/h"
    )
    assert body["enabled"] is True and body["created_at"] == sub["created_at"]
    assert body["updated_at"] > sub["updated_at"]


def test_patch_with_nothing_new_changes_nothing(client, acme, sub):
    clock.advance(5)
    for body in ({}, {"enabled": True, "events": ["ticket.created"]}):
        response = client.patch(f"/api/v1/webhooks/{sub['id']}", json=body, headers=acme)
        assert response.status_code == 200 and response.get_json()["updated_at"] == sub["updated_at"]


def test_description_null_clears_it(client, acme):
    sub = create(client, acme, description="x").get_json()
    body = client.patch(f"/api/v1/webhooks/{sub['id']}", json={"description": None}, headers=acme).get_json()
    assert body["description"] is None


def test_disabling_dead_letters_queued_deliveries(client, acme, sub):
    pending, retrying, delivered = (add_delivery(sub["id"], s) for s in ("pending", "retrying", "delivered"))
    body = client.patch(f"/api/v1/webhooks/{sub['id']}", json={"enabled": False}, headers=acme).get_json()
    assert body["enabled"] is False and body["disabled_at"] is None  # only auto-disable stamps it
    statuses = {d.id: d.status for d in WebhookDelivery.select()}
    assert statuses == {pending.id: "dead", retrying.id: "dead", delivered.id: "delivered"}


def test_re_enabling_clears_the_auto_disable_stamp_and_keeps_the_notice(client, acme, sub):
    WebhookSubscription.update(enabled=False, disabled_at=clock.now(), last_error="auto-disabled").execute()
    body = client.patch(f"/api/v1/webhooks/{sub['id']}", json={"enabled": True}, headers=acme).get_json()
    assert body["enabled"] is True and body["disabled_at"] is None and body["last_error"] == "auto-disabled"


def test_a_blocked_url_on_patch_changes_nothing(client, acme, sub):
    response = client.patch(f"/api/v1/webhooks/{sub['id']}", json={"url": "https://10.0.0.1/x"}, headers=acme)
    assert_error(response, 400, "invalid_field", "url")
    assert WebhookSubscription.get_by_id(sub["id"]).url == URL


def test_operator_settings_allow_http_and_trusted_networks(client, acme, app, monkeypatch):
    assert_error(create(client, acme, url="http://127.0.0.1:9000/h"), 400, "invalid_field", "url")
    monkeypatch.setitem(app.config, "WEBHOOK_ALLOW_HTTP", 1)
    assert_error(create(client, acme, url="http://127.0.0.1:9000/h"), 400, "invalid_field", "url")
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", "127.0.0.0/8,::1/128")
    assert create(client, acme, url="http://127.0.0.1:9000/h").status_code == 201
    assert create(client, acme, url="http://[::1]:9000/h").status_code == 201
    assert_error(create(client, acme, url="http://10.0.0.1/h"), 400, "invalid_field", "url")


# delete


def test_delete_removes_it_and_dead_letters_its_queued_deliveries(client, acme, sub):
    pending, failed = add_delivery(sub["id"], "pending"), add_delivery(sub["id"], "failed")
    response = client.delete(f"/api/v1/webhooks/{sub['id']}", headers=acme)
    assert response.status_code == 200
    assert response.get_json() == {"object": "webhook_subscription", "id": sub["id"], "deleted": True}
    assert_error(client.get(f"/api/v1/webhooks/{sub['id']}", headers=acme), 404, "not_found", "id")
    assert client.get("/api/v1/webhooks", headers=acme).get_json()["data"] == []
    assert_error(client.delete(f"/api/v1/webhooks/{sub['id']}", headers=acme), 404, "not_found", "id")
    assert WebhookDelivery.get_by_id(pending.id).status == "dead"
    assert WebhookDelivery.get_by_id(failed.id).status == "failed"
    row = WebhookSubscription.get_by_id(sub["id"])
    assert row.secret_encrypted is None and signing_secrets(row) == []  # nothing left to sign with


# rotation


def test_rotation_makes_a_new_current_secret_and_keeps_the_old_for_24_hours(client, acme, sub):
    response = rotate(client, acme, sub["id"])
    body = response.get_json()
    assert response.status_code == 200
    assert set(body) == SUBSCRIPTION_FIELDS | {
        "signing_secret",
        "previous_signing_secret_expires_at",
        "signing_secret_generation",
    }
    assert body["signing_secret"] != sub["signing_secret"]
    assert body["signing_secret_generation"] == 2
    expires = datetime.fromisoformat(body["previous_signing_secret_expires_at"].rstrip("Z"))
    assert timedelta(hours=24) - timedelta(seconds=5) < expires - clock.now() <= timedelta(hours=24)
    row = WebhookSubscription.get_by_id(sub["id"])
    assert signing_secrets(row) == [body["signing_secret"], sub["signing_secret"]]
    clock.advance(24 * 3600 + 1)
    assert signing_secrets(row) == [body["signing_secret"]]


def test_a_second_rotation_inside_the_grace_period_is_409(client, acme, sub):
    first = rotate(client, acme, sub["id"], key="first-rotation").get_json()
    clock.advance(23 * 3600)
    error = assert_error(rotate(client, acme, sub["id"], key="second-rotation"), 409, "rotation_in_progress")
    assert error["type"] == "conflict_error"
    expires = first["previous_signing_secret_expires_at"]
    assert error["details"] == {"previous_signing_secret_expires_at": expires}
    assert signing_secrets(WebhookSubscription.get_by_id(sub["id"]))[0] == first["signing_secret"]
    clock.advance(3601)
    third = rotate(client, acme, sub["id"], key="third-rotation").get_json()
    assert third["signing_secret_generation"] == 3
    assert signing_secrets(WebhookSubscription.get_by_id(sub["id"])) == [
        third["signing_secret"],
        first["signing_secret"],
    ]


def test_an_identical_retry_returns_the_committed_rotation_with_the_same_secret(client, acme, sub):
    first = rotate(client, acme, sub["id"], key="retry-me-123")
    again = rotate(client, acme, sub["id"], key="retry-me-123")
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()
    assert WebhookSubscription.get_by_id(sub["id"]).secret_generation == 2


@pytest.mark.parametrize(
    "key,status,code",
    [
        (None, 400, "invalid_idempotency_key"),
        ("1234567", 400, "invalid_idempotency_key"),
        ("k" * 256, 400, "invalid_idempotency_key"),
        ("has space", 400, "invalid_idempotency_key"),
        ("12345678", 200, None),
        ("k" * 255, 200, None),
    ],
    ids=["no key", "seven characters", "256 characters", "a space", "eight characters", "255 characters"],
)
def test_rotation_requires_an_idempotency_key_of_8_to_255(client, acme, sub, key, status, code):
    headers = {**acme, **({"Idempotency-Key": key} if key is not None else {})}
    response = client.post(f"/api/v1/webhooks/{sub['id']}/rotate_secret", headers=headers)
    if code:
        assert_error(response, status, code, "Idempotency-Key")
        assert WebhookSubscription.get_by_id(sub["id"]).secret_generation == 1
    else:
        assert response.status_code == status


def test_rotation_needs_webhooks_manage(client, load):
    load(tenant_fixture("acme", scopes=["webhooks.read", "webhooks.write", "tickets.read"]))
    headers = auth_headers("sk_test_acme_token_0001")
    sub = create(client, headers).get_json()
    error = assert_error(rotate(client, headers, sub["id"]), 403, "insufficient_scope")
    assert error["details"]["required_scope"] == "webhooks.manage"


# ping


def test_ping_queues_one_pending_delivery_to_this_subscription_only(client, acme):
    target = create(client, acme, events=["*"]).get_json()
    create(client, acme, events=["*"])  # another subscription that would match a fanned-out event
    response = client.post(f"/api/v1/webhooks/{target['id']}/ping", headers=acme)
    assert response.status_code == 202
    delivery = response.get_json()
    assert delivery["object"] == "webhook_delivery" and re.match(r"^whd_[0-9a-f]{24}$", delivery["id"])
    assert delivery["status"] == "pending" and delivery["attempts"] == 0
    assert delivery["subscription_id"] == target["id"] and delivery["event_type"] == "webhook.ping"
    assert delivery["last_status_code"] is None and delivery["last_error"] is None
    event = Event.get_by_id(delivery["event_id"])
    assert event.type == "webhook.ping" and event.data == {"subscription_id": target["id"]}
    row = WebhookDelivery.get_by_id(delivery["id"])
    assert row.payload["id"] == event.id and row.payload["type"] == "webhook.ping"
    assert row.next_attempt_at is not None and WebhookDelivery.select().count() == 1


def test_ping_is_sent_whatever_events_the_subscription_chose(client, acme, sub):
    assert client.post(f"/api/v1/webhooks/{sub['id']}/ping", headers=acme).status_code == 202


def test_pinging_a_disabled_subscription_is_422_and_queues_nothing(client, acme, sub):
    client.patch(f"/api/v1/webhooks/{sub['id']}", json={"enabled": False}, headers=acme)
    error = assert_error(
        client.post(f"/api/v1/webhooks/{sub['id']}/ping", headers=acme), 422, "subscription_disabled"
    )
    assert error["type"] == "unprocessable_error"
    assert Event.select().count() == 0 and WebhookDelivery.select().count() == 0


# the event type catalog


def test_event_types_is_the_live_catalog_of_the_spec(client, acme):
    body = client.get("/api/v1/webhooks/event_types?limit=100", headers=acme).get_json()
    assert [t["type"] for t in body["data"]] == list(EVENT_TYPES) and len(EVENT_TYPES) == 26
    by_type = {t["type"]: t for t in body["data"]}
    assert by_type["payment.refunded"] == {
        "object": "webhook_event_type",
        "type": "payment.refunded",
        "description": "A payment was refunded, fully or partially.",
        "data_object": "refund",
    }
    assert by_type["webhook.ping"]["data_object"] is None
    assert all(t["description"] for t in body["data"])


def test_event_types_are_paginated_like_every_list(client, acme):
    seen, cursor = [], None
    for _ in range(5):
        url = "/api/v1/webhooks/event_types?limit=10" + (f"&cursor={cursor}" if cursor else "")
        page = client.get(url, headers=acme).get_json()
        seen += [t["type"] for t in page["data"]]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            break
    assert seen == list(EVENT_TYPES) and cursor is None
    assert client.get("/api/v1/webhooks/event_types", headers=acme).get_json()["has_more"] is True  # 25 of 26


def test_an_event_types_cursor_is_bound_to_its_endpoint(client, acme):
    for _ in range(2):
        create(client, acme)
    cursor = client.get("/api/v1/webhooks?limit=1", headers=acme).get_json()["next_cursor"]
    assert_error(
        client.get(f"/api/v1/webhooks/event_types?cursor={cursor}", headers=acme),
        400,
        "invalid_cursor",
        "cursor",
    )
    types_cursor = client.get("/api/v1/webhooks/event_types?limit=1", headers=acme).get_json()["next_cursor"]
    assert_error(
        client.get(f"/api/v1/webhooks?cursor={types_cursor}", headers=acme), 400, "invalid_cursor", "cursor"
    )


# secrets never leak


def test_the_secret_is_stored_encrypted_and_nowhere_in_plain_text(client, acme, app):
    sub = create(client, acme, events=["*"]).get_json()
    rotated = rotate(client, acme, sub["id"]).get_json()
    rotate(client, acme, sub["id"])  # a replay, read back from the idempotency store
    row = WebhookSubscription.get_by_id(sub["id"])
    assert row.secret_encrypted.startswith("fernet:") and row.previous_secret_encrypted.startswith("fernet:")
    dump = database_dump()
    assert "whsub_" in dump  # the dump does hold the database's rows
    for secret in (sub["signing_secret"], rotated["signing_secret"]):
        assert secret not in dump
        assert secret[len("whsec_") :] not in dump


def test_the_secret_appears_only_in_the_create_and_rotate_responses_and_in_no_log(client, acme, caplog):
    caplog.set_level(logging.DEBUG)
    created = client.post(
        "/api/v1/webhooks",
        json={"url": URL, "events": ["*"]},
        headers={**acme, "Idempotency-Key": "create-0001"},
    )
    sub = created.get_json()
    rotated = rotate(client, acme, sub["id"])
    secrets = [sub["signing_secret"], rotated.get_json()["signing_secret"]]
    base = f"/api/v1/webhooks/{sub['id']}"
    others = [
        client.post(
            "/api/v1/webhooks",
            json={"url": URL, "events": ["*"]},
            headers={**acme, "Idempotency-Key": "create-0001"},
        ),  # a replay shows the same secret
        rotate(client, acme, sub["id"]),
        client.get(base, headers=acme),
        client.get("/api/v1/webhooks", headers=acme),
        client.patch(base, json={"description": "x"}, headers=acme),
        client.post(f"{base}/ping", headers=acme),
        client.get("/api/v1/webhooks/event_types", headers=acme),
        rotate(client, acme, sub["id"], key="another-key-1"),
        client.delete(base, headers=acme),
    ]
    assert others[0].get_json()["signing_secret"] == secrets[0]
    assert others[1].get_json()["signing_secret"] == secrets[1]
    for response in others[2:]:
        assert response.status_code < 500
        assert not any(s in response.get_data(as_text=True) for s in secrets)
    assert any(record.name == "peewee" for record in caplog.records)  # SQL with its parameters was logged
    logged = "\n".join(record.getMessage() for record in caplog.records)
    for secret in secrets:
        assert secret not in logged and secret[len("whsec_") :] not in logged


# fixtures


def test_fixture_subscriptions_keep_their_ids_and_secrets(client, load, acme):
    summary = load(
        tenant_fixture(
            "globex",
            token="sk_test_globex_token_0001",
            webhook_subscriptions=[
                {
                    "id": "whsub_demo_globex_1",
                    "url": URL,
                    "events": ["*"],
                    "description": "Demo",
                    "signing_secret": "whsec_demo_secret_globex_0001",
                    "created_at": "2026-11-01T10:00:00.000Z",
                },
                {"url": URL, "events": ["ticket.created"], "enabled": False},
            ],
        )
    )
    secrets = {s["id"]: s["signing_secret"] for s in summary["webhook_subscriptions"]}
    assert secrets["whsub_demo_globex_1"] == "whsec_demo_secret_globex_0001" and len(secrets) == 2
    row = WebhookSubscription.get_by_id("whsub_demo_globex_1")
    assert signing_secrets(row) == ["whsec_demo_secret_globex_0001"]
    body = client.get(
        "/api/v1/webhooks/whsub_demo_globex_1", headers=auth_headers("sk_test_globex_token_0001")
    ).get_json()
    assert body["created_at"] == "2026-11-01T10:00:00.000Z" and body["api_version"] == "2026-11-01"
    assert_error(client.get("/api/v1/webhooks/whsub_demo_globex_1", headers=acme), 404, "not_found", "id")


@pytest.mark.parametrize(
    "entry,path",
    [
        ({"url": "https://127.0.0.1/x", "events": ["*"]}, "webhook_subscriptions[0].url"),
        ({"url": URL, "events": ["nope"]}, "webhook_subscriptions[0].events"),
        ({"url": URL, "events": ["*"], "secret": "x"}, "webhook_subscriptions[0].secret"),
        ({"url": URL, "events": ["*"], "signing_secret": "short"}, "webhook_subscriptions[0].signing_secret"),
        ({"url": URL, "events": ["*"], "api_version": "2019-01-01"}, "webhook_subscriptions[0].api_version"),
    ],
    ids=["a blocked url", "an unknown event", "an unknown key", "a weak secret", "an unknown version"],
)
def test_bad_fixture_subscriptions_name_the_entry(load, entry, path):
    from shop.domain.fixtures import FixtureError

    with pytest.raises(FixtureError) as error:
        load(tenant_fixture("globex", webhook_subscriptions=[entry]))
    assert error.value.path == f"tenants[0].{path}"
    assert WebhookSubscription.select().count() == 0


def test_the_demo_shop_has_subscriptions_the_demo_key_can_see(client):
    import json
    from importlib import resources

    from shop.domain.fixtures import load_fixture

    load_fixture(json.loads(resources.files("shop").joinpath("demo/demo_shop.json").read_text()))
    body = client.get("/api/v1/webhooks", headers=auth_headers("sk_test_acme_demo_0001")).get_json()
    assert [s["id"] for s in body["data"]] == ["whsub_acme_demo_accounting", "whsub_acme_demo_frontdesk"]
    # both point at hooks.example.com, so both are off: the demo never sends events out by itself
    assert [s["enabled"] for s in body["data"]] == [False, False]


def test_two_rotations_at_once_commit_exactly_one(app, client, acme, sub):
    from concurrent.futures import ThreadPoolExecutor

    def attempt(key):
        return rotate(app.test_client(), acme, sub["id"], key=key).status_code

    with ThreadPoolExecutor(max_workers=4) as pool:
        codes = sorted(pool.map(attempt, [f"concurrent-{i:04d}" for i in range(4)]))
    assert codes == [200, 409, 409, 409]
    assert WebhookSubscription.get_by_id(sub["id"]).secret_generation == 2


def test_the_openapi_document_describes_the_webhook_endpoints(client):
    paths = client.get("/api/v1/openapi.json").get_json()["paths"]
    rotate_doc = paths["/api/v1/webhooks/{id}/rotate_secret"]["post"]
    assert rotate_doc["x-required-scope"] == "webhooks.manage" and "409" in rotate_doc["responses"]
    assert "422" in paths["/api/v1/webhooks/{id}/ping"]["post"]["responses"]
    assert paths["/api/v1/webhooks/event_types"]["get"]["x-required-scope"] == "webhooks.read"
    created = paths["/api/v1/webhooks"]["post"]["responses"]["201"]["content"]["application/json"]["schema"]
    assert created["$ref"].endswith("WebhookWithSecret")

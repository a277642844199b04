"""Webhook subscriptions: the bad-input table (nothing is a 500, nothing is written) and the scope gate."""

import json

import pytest

from shop.models import Event, WebhookDelivery, WebhookSubscription
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.webhooks import URL, create

GOOD = {"url": URL, "events": ["ticket.created"]}


def body(**fields) -> dict:
    """A valid create body with some fields replaced."""
    return {**GOOD, **fields}


CREATE_CASES = [
    # (body, code, param, id); every one is 400
    ({"events": ["ticket.created"]}, "missing_field", "url", "a missing url is missing_field"),
    ({"url": URL}, "missing_field", "events", "missing events are missing_field"),
    (body(url=None), "invalid_field", "url", "a null url is invalid"),
    (body(url=42), "invalid_field", "url", "a numeric url is invalid"),
    (body(url=["https://a.example.com"]), "invalid_field", "url", "a url in an array is invalid"),
    (body(url=""), "invalid_field", "url", "an empty url is invalid"),
    (body(url="not a url"), "invalid_field", "url", "text that is not a url is invalid"),
    (body(url="http://hooks.example.com/x"), "invalid_field", "url", "plain http is refused"),
    (body(url="https://u:p@hooks.example.com/x"), "invalid_field", "url", "credentials are refused"),
    (body(url="https://127.0.0.1/x"), "invalid_field", "url", "a loopback literal is refused"),
    (body(url="https://0x7f.1/x"), "invalid_field", "url", "a hex loopback is refused"),
    (body(url="https://[::ffff:127.0.0.1]/x"), "invalid_field", "url", "a mapped loopback is refused"),
    (body(url="https://169.254.169.254/x"), "invalid_field", "url", "cloud metadata is refused"),
    (body(url="https://[fd00:ec2::254]/x"), "invalid_field", "url", "IPv6 metadata is refused"),
    (body(url="https://localhost./x"), "invalid_field", "url", "localhost is refused"),
    (body(url="https://[v1.x]/x"), "invalid_field", "url", "an IPvFuture literal is refused"),
    (body(url="https://h.example.com:99999/"), "invalid_field", "url", "a bad port is refused"),
    (body(url="https://h.example.com/" + "x" * 3000), "invalid_field", "url", "a huge url is refused"),
    (body(url="https://h\u0000.example.com/"), "invalid_field", "url", "a NUL in the url is refused"),
    (body(events=[]), "invalid_field", "events", "empty events are invalid"),
    (body(events="ticket.created"), "invalid_field", "events", "events as a string are invalid"),
    (body(events={"a": 1}), "invalid_field", "events", "events as an object are invalid"),
    (body(events=None), "invalid_field", "events", "null events are invalid"),
    (body(events=[["ticket.created"]]), "invalid_field", "events", "a nested array is invalid"),
    (body(events=["ticket.created", 5]), "invalid_field", "events", "a number in events is invalid"),
    (body(events=[None]), "invalid_field", "events", "a null in events is invalid"),
    (body(events=[{"type": "x"}]), "invalid_field", "events", "an object in events is invalid"),
    (body(events=[True]), "invalid_field", "events", "a boolean in events is invalid"),
    (body(events=["ticket.exploded"]), "invalid_field", "events", "an unknown event is invalid"),
    (body(events=["Ticket.Created"]), "invalid_field", "events", "event names are case-sensitive"),
    (body(events=["ticket.*"]), "invalid_field", "events", "a family wildcard is not supported"),
    (body(events=["*", "ticket.created"]), "invalid_field", "events", "star must stand alone"),
    (body(events=[""]), "invalid_field", "events", "an empty name is invalid"),
    (body(description="x" * 501), "invalid_field", "description", "a 501-char description is invalid"),
    (body(description=5), "invalid_field", "description", "a numeric description is invalid"),
    (body(enabled="true"), "invalid_field", "enabled", "enabled as text is invalid"),
    (body(enabled=1), "invalid_field", "enabled", "enabled as a number is invalid"),
    (body(enabled=None), "invalid_field", "enabled", "a null enabled is invalid"),
    (body(api_version="2026-11-01"), "invalid_field", "api_version", "api_version is not writable"),
    (body(secret="mine"), "invalid_field", "secret", "an unknown field is invalid"),
    (body(signing_secret="whsec_x"), "invalid_field", "signing_secret", "a chosen secret is refused"),
]


def assert_nothing_written():
    assert WebhookSubscription.select().count() == 0
    assert Event.select().count() == 0 and WebhookDelivery.select().count() == 0


@pytest.mark.parametrize("sent,code,param", [c[:3] for c in CREATE_CASES], ids=[c[3] for c in CREATE_CASES])
def test_bad_create_bodies(client, acme, sent, code, param):
    response = client.post("/api/v1/webhooks", json=sent, headers=acme)
    assert_error(response, 400, code, param)
    assert_nothing_written()


@pytest.mark.parametrize(
    "url",
    ["https://127.0.0.1/hook", "https://10.0.0.5/hook", "https://[::1]/hook", "https://localhost/hook"],
    ids=["loopback", "private", "ipv6 loopback", "localhost by name"],
)
def test_a_refused_private_url_names_the_setting_that_allows_it(client, acme, url):
    error = assert_error(
        client.post("/api/v1/webhooks", json=body(url=url), headers=acme), 400, "invalid_field", "url"
    )
    assert "SHOP_WEBHOOK_TRUSTED_NETWORKS" in error["message"]
    assert_nothing_written()


def test_a_cloud_metadata_url_gets_no_hint_to_trust_it(client, acme):
    error = assert_error(
        client.post("/api/v1/webhooks", json=body(url="https://169.254.169.254/x"), headers=acme),
        400,
        "invalid_field",
        "url",
    )
    assert "cloud metadata" in error["message"] and "TRUSTED_NETWORKS" not in error["message"]


def test_the_fixture_loader_names_the_setting_too(runner, tmp_path):
    sub = {"url": "https://192.168.1.20/hook", "events": ["*"]}
    path = tmp_path / "shop.json"
    path.write_text(json.dumps({"tenants": [tenant_fixture("acme", webhook_subscriptions=[sub])]}))
    result = runner.invoke(args=["shop", "load", str(path)])
    assert result.exit_code == 1 and "webhook_subscriptions[0]" in result.output
    assert "SHOP_WEBHOOK_TRUSTED_NETWORKS" in result.output
    assert_nothing_written()


@pytest.mark.parametrize(
    "raw,param",
    [
        ('{"url": "https://a.example.com/", "events": ["*"], "description": "\\ud800"}', "description"),
        ('{"url": "https://a.example.com/\\udfff", "events": ["*"]}', "url"),
        ('{"url": "https://a.example.com/", "events": ["\\ud800"]}', "events"),
        ('{"url": "https://a.example.com/", "events": ["*"], "description": "a\\u0000"}', "description"),
    ],
    ids=[
        "a lone surrogate in the description",
        "a lone surrogate in the url",
        "a lone surrogate in events",
        "a NUL in the description (PostgreSQL cannot store it)",
    ],
)
def test_text_that_cannot_be_stored_is_400_not_500(client, acme, raw, param):
    response = client.post("/api/v1/webhooks", data=raw, content_type="application/json", headers=acme)
    assert_error(response, 400, "invalid_field", param)
    assert_nothing_written()


@pytest.mark.parametrize(
    "raw,code",
    [
        ("{", "invalid_json"),
        ("[]", "invalid_json"),
        ('"x"', "invalid_json"),
        ("null", "invalid_json"),
    ],
    ids=["truncated json", "an array body", "a string body", "a null body"],
)
def test_bodies_that_are_not_objects(client, acme, raw, code):
    response = client.post("/api/v1/webhooks", data=raw, content_type="application/json", headers=acme)
    assert_error(response, 400, code)
    assert_nothing_written()


def test_a_form_body_is_415(client, acme):
    response = client.post("/api/v1/webhooks", data={"url": URL}, headers=acme)
    assert_error(response, 415, "unsupported_media_type")
    assert_nothing_written()


def test_the_longest_description_is_accepted(client, acme):
    assert create(client, acme, description="x" * 500).status_code == 201


def test_repeated_event_names_subscribe_once(client, acme):
    body = create(client, acme, events=["ticket.created", "ticket.created", "invoice.paid"]).get_json()
    assert body["events"] == ["ticket.created", "invoice.paid"]


PATCH_CASES = [
    ({"url": None}, "invalid_field", "url", "a null url"),
    ({"url": "https://10.1.2.3/x"}, "invalid_field", "url", "a private url"),
    ({"url": "ftp://hooks.example.com/"}, "invalid_field", "url", "an ftp url"),
    ({"events": None}, "invalid_field", "events", "null events"),
    ({"events": []}, "invalid_field", "events", "empty events"),
    ({"events": [["*"]]}, "invalid_field", "events", "nested events"),
    ({"events": ["nope.nope"]}, "invalid_field", "events", "unknown events"),
    ({"enabled": None}, "invalid_field", "enabled", "a null enabled"),
    ({"enabled": "false"}, "invalid_field", "enabled", "enabled as text"),
    ({"description": ["x"]}, "invalid_field", "description", "a description array"),
    ({"description": "y" * 501}, "invalid_field", "description", "a long description"),
    ({"description": "a\x00b"}, "invalid_field", "description", "a NUL in the description"),
    ({"id": "whsub_x"}, "invalid_field", "id", "a read-only field"),
    ({"signing_secret": "whsec_x"}, "invalid_field", "signing_secret", "the secret"),
]


@pytest.mark.parametrize(
    "body,code,param", [c[:3] for c in PATCH_CASES], ids=[f"patch refuses {c[3]}" for c in PATCH_CASES]
)
def test_bad_patch_bodies_change_nothing(client, acme, body, code, param):
    sub = create(client, acme).get_json()
    before = WebhookSubscription.get_by_id(sub["id"]).__data__
    response = client.patch(f"/api/v1/webhooks/{sub['id']}", json=body, headers=acme)
    assert_error(response, 400, code, param)
    assert WebhookSubscription.get_by_id(sub["id"]).__data__ == before


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        "limit=101",
        "limit=x",
        "limit=1&limit=2",
        "limit[]=1",
        "cursor=",
        "cursor=abc",
        "cursor[x]=1",
    ],
    ids=lambda q: f"list query {q}",
)
@pytest.mark.parametrize("path", ["/api/v1/webhooks", "/api/v1/webhooks/event_types"], ids=["subs", "types"])
def test_bad_list_queries_are_400(client, acme, path, query):
    response = client.get(f"{path}?{query}", headers=acme)
    assert response.status_code == 400
    assert response.get_json()["error"]["code"] in ("invalid_query", "invalid_cursor")


@pytest.mark.parametrize(
    "method,path",
    [
        ("put", "/api/v1/webhooks"),
        ("delete", "/api/v1/webhooks"),
        ("get", "/api/v1/webhooks/whsub_x/ping"),
        ("get", "/api/v1/webhooks/whsub_x/rotate_secret"),
        ("post", "/api/v1/webhooks/event_types"),
        ("delete", "/api/v1/webhooks/event_types"),
        ("patch", "/api/v1/webhooks/event_types"),
    ],
    ids=lambda v: v,
)
def test_wrong_methods_are_405(client, acme, method, path):
    response = getattr(client, method)(path, headers=acme)
    assert_error(response, 405, "method_not_allowed")
    if path.endswith("event_types"):  # not read as subscription "event_types" (DELETE /webhooks/<id>)
        assert response.headers["Allow"] == "GET, HEAD"


@pytest.mark.parametrize("method, action", [("delete", ""), ("post", "/ping"), ("post", "/rotate_secret")])
def test_fields_sent_to_a_write_that_takes_none_are_refused_and_change_nothing(client, acme, method, action):
    sub = create(client, acme).get_json()
    headers = {**acme, "Idempotency-Key": "no-fields-0001"}
    response = getattr(client, method)(
        f"/api/v1/webhooks/{sub['id']}{action}", json={"x": 1}, headers=headers
    )
    assert response.status_code == 400
    after = WebhookSubscription.get_by_id(sub["id"])
    assert after.deleted_at is None and after.secret_generation == 1
    assert WebhookDelivery.select().count() == 0


# the scope gate (Authentication point 4)

FAMILIES = [
    "customers.read",
    "tickets.read",
    "invoices.read",
    "estimates.read",
    "payments.read",
    "appointments.read",
    "leads.read",
    "messages.read",
]
BASE = ["webhooks.read", "webhooks.write"]

SCOPE_CASES = [
    # (events, scopes the key holds besides webhooks.*, missing scopes or [] for allowed, id)
    (["ticket.created"], ["tickets.read"], [], "ticket events need tickets.read"),
    (["ticket.status_changed"], [], ["tickets.read"], "ticket events without tickets.read"),
    (["invoice.paid"], ["tickets.read"], ["invoices.read"], "invoice events need invoices.read"),
    (["customer.created"], [], ["customers.read"], "customer events need customers.read"),
    (["estimate.approved"], [], ["estimates.read"], "estimate events need estimates.read"),
    (["payment.refunded"], [], ["payments.read"], "payment events need payments.read"),
    (["appointment.no_show"], [], ["appointments.read"], "appointment events need appointments.read"),
    (["lead.converted"], [], ["leads.read"], "lead events need leads.read"),
    (["message.received"], [], ["messages.read"], "message events need messages.read"),
    (["webhook.ping"], [], [], "webhook.ping needs no scope"),
    (
        ["lead.created", "invoice.sent", "message.sent"],
        ["messages.read"],
        ["invoices.read", "leads.read"],
        "every missing family is named",
    ),
    (["*"], [], FAMILIES, "star without any read scope names all eight"),
    (["*"], [s for s in FAMILIES if s != "leads.read"], ["leads.read"], "star needs leads.read too"),
    (["*"], FAMILIES, [], "star with every read scope"),
    (["customer.updated", "payment.recorded"], ["customers.read", "payments.read"], [], "two families held"),
]


def _key(load, scopes):
    load(tenant_fixture("acme", scopes=BASE + scopes))
    return auth_headers("sk_test_acme_token_0001")


@pytest.mark.parametrize(
    "events,scopes,missing", [c[:3] for c in SCOPE_CASES], ids=[c[3] for c in SCOPE_CASES]
)
def test_scope_gate_at_create(client, load, events, scopes, missing):
    response = create(client, _key(load, scopes), events=events)
    if not missing:
        assert response.status_code == 201
        return
    error = assert_error(response, 403, "insufficient_scope", "events")
    assert error["type"] == "permission_error"
    assert error["details"] == {"required_scope": sorted(missing)[0], "required_scopes": sorted(missing)}
    assert all(scope in error["message"] for scope in missing)
    assert_nothing_written()


@pytest.mark.parametrize(
    "events,scopes,missing", [c[:3] for c in SCOPE_CASES], ids=[c[3] for c in SCOPE_CASES]
)
def test_scope_gate_at_every_change_of_events(client, load, events, scopes, missing):
    headers = _key(load, scopes)
    sub = create(client, headers, events=["webhook.ping"]).get_json()
    response = client.patch(f"/api/v1/webhooks/{sub['id']}", json={"events": events}, headers=headers)
    if not missing:
        assert response.status_code == 200 and response.get_json()["events"] == events
        return
    error = assert_error(response, 403, "insufficient_scope", "events")
    assert error["details"]["required_scopes"] == sorted(missing)
    assert WebhookSubscription.get_by_id(sub["id"]).events == ["webhook.ping"]


def test_a_change_that_leaves_events_alone_passes_no_gate(client, load):
    full = _key(load, FAMILIES)
    sub = create(client, full, events=["*"]).get_json()
    from shop.models import ApiKey

    ApiKey.update(scopes=BASE).execute()  # the key lost its read scopes since
    response = client.patch(f"/api/v1/webhooks/{sub['id']}", json={"description": "still mine"}, headers=full)
    assert response.status_code == 200
    assert_error(
        client.patch(f"/api/v1/webhooks/{sub['id']}", json={"events": ["*"]}, headers=full),
        403,
        "insufficient_scope",
        "events",
    )


def test_the_scope_gate_comes_after_the_body_is_valid(client, load):
    response = create(client, _key(load, []), events=["*"], url="https://127.0.0.1/")
    assert_error(response, 400, "invalid_field", "url")


@pytest.mark.parametrize(
    "method,path,scope",
    [
        ("get", "/api/v1/webhooks", "webhooks.read"),
        ("post", "/api/v1/webhooks", "webhooks.write"),
        ("get", "/api/v1/webhooks/event_types", "webhooks.read"),
        ("get", "/api/v1/webhooks/whsub_x", "webhooks.read"),
        ("patch", "/api/v1/webhooks/whsub_x", "webhooks.write"),
        ("delete", "/api/v1/webhooks/whsub_x", "webhooks.write"),
        ("post", "/api/v1/webhooks/whsub_x/ping", "webhooks.write"),
        ("post", "/api/v1/webhooks/whsub_x/rotate_secret", "webhooks.manage"),
    ],
    ids=lambda v: v,
)
def test_each_endpoint_requires_its_scope(client, load, method, path, scope):
    load(
        tenant_fixture(
            "acme", scopes=[s for s in ["webhooks.read", "webhooks.write", "webhooks.manage"] if s != scope]
        )
    )
    headers = {**auth_headers("sk_test_acme_token_0001"), "Idempotency-Key": "scope-check-1"}
    has_body = method in ("post", "patch") and not path.endswith(("ping", "rotate_secret"))
    kwargs = {"data": json.dumps(GOOD), "content_type": "application/json"} if has_body else {}
    error = assert_error(getattr(client, method)(path, headers=headers, **kwargs), 403, "insufficient_scope")
    assert error["details"] == {"required_scope": scope}


# issue 23, item 1: pointing a subscription's events at a receiver anew is the same act as choosing them
ROUTING_CHANGES = [
    ({"url": "https://attacker.example.net/take"}, "a new url"),
    ({"url": "https://attacker.example.net/t", "events": ["webhook.ping"]}, "a new url, events it may read"),
    ({"enabled": True}, "re-enabling"),
    ({"enabled": True, "description": "mine now"}, "re-enabling among other fields"),
]


@pytest.mark.parametrize("change", [c[0] for c in ROUTING_CHANGES], ids=[c[1] for c in ROUTING_CHANGES])
def test_scope_gate_at_every_change_of_url_or_enabled(client, load, change):
    full = _key(load, FAMILIES)
    sub = create(client, full, events=["*"], enabled=False).get_json()
    from shop.models import ApiKey

    ApiKey.update(scopes=BASE).execute()  # now a key with only the webhook scopes
    before = WebhookSubscription.get_by_id(sub["id"]).__data__
    response = client.patch(f"/api/v1/webhooks/{sub['id']}", json=change, headers=full)
    if "events" in change:  # events it may read: the url follows them, the gate passes
        assert response.status_code == 200 and response.get_json()["url"] == change["url"]
        return
    error = assert_error(response, 403, "insufficient_scope", "events")
    created = assert_error(create(client, full, events=["*"]), 403, "insufficient_scope", "events")
    assert {k: error[k] for k in ("type", "message", "details")} == {
        k: created[k] for k in ("type", "message", "details")
    }
    assert WebhookSubscription.get_by_id(sub["id"]).__data__ == before


def test_a_url_or_enabled_repeating_the_current_value_passes_no_gate(client, load):
    full = _key(load, FAMILIES)
    sub = create(client, full, events=["*"]).get_json()
    from shop.models import ApiKey

    ApiKey.update(scopes=BASE).execute()
    response = client.patch(
        f"/api/v1/webhooks/{sub['id']}", json={"url": sub["url"], "enabled": True}, headers=full
    )
    assert response.status_code == 200
    disable = client.patch(f"/api/v1/webhooks/{sub['id']}", json={"enabled": False}, headers=full)
    assert disable.status_code == 200


def test_the_http_refusal_names_the_setting_that_allows_it(client, acme):
    """Issue 23, item 7: a new user learns from the error how a local demo receiver is allowed."""
    error = assert_error(create(client, acme, url="http://hooks.example.com/x"), 400, "invalid_field", "url")
    assert "SHOP_WEBHOOK_ALLOW_HTTP" in error["message"]

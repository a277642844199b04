"""Issue 17's routes: the bad-input table (the spec's error body, never a 500, nothing written)."""

import json

import pytest

from shop.models import WebhookDelivery, WebhookRecovery
from tests.helpers import assert_error
from tests.helpers.webhooks import create

SINCE = "2026-01-01T00:00:00Z"

RECOVER_CASES = [
    # (body, code, param, id); every one is 400
    ({}, "missing_field", "since", "a missing since is missing_field"),
    ({"since": None}, "invalid_field", "since", "a null since is invalid"),
    ({"since": 1700000000}, "invalid_field", "since", "a number for since is invalid"),
    ({"since": [SINCE]}, "invalid_field", "since", "since in an array is invalid"),
    ({"since": {"at": SINCE}}, "invalid_field", "since", "since as an object is invalid"),
    ({"since": "yesterday"}, "invalid_field", "since", "words for since are invalid"),
    ({"since": "2026-13-01T00:00:00Z"}, "invalid_field", "since", "month 13 is invalid"),
    ({"since": "2026-02-30T00:00:00Z"}, "invalid_field", "since", "february 30 is invalid"),
    ({"since": "2026-01-01T25:00:00Z"}, "invalid_field", "since", "hour 25 is invalid"),
    ({"since": "0001-01-01T00:00:00+05:00"}, "invalid_field", "since", "a time before year 1 in UTC"),
    ({"since": "9999-12-31T23:59:59-05:00"}, "invalid_field", "since", "a time after year 9999 in UTC"),
    ({"since": "x" * 5000}, "invalid_field", "since", "an over-long since is invalid"),
    ({"since": SINCE, "until": "2025-01-01T00:00:00Z"}, "invalid_field", "until", "until before since"),
    ({"since": SINCE, "until": SINCE}, "invalid_field", "until", "until equal to since"),
    ({"since": SINCE, "until": 5}, "invalid_field", "until", "a number for until is invalid"),
    ({"since": SINCE, "until": "tomorrow"}, "invalid_field", "until", "words for until are invalid"),
    ({"since": SINCE, "statuses": "dead"}, "invalid_field", "statuses", "statuses as a string"),
    ({"since": SINCE, "statuses": []}, "invalid_field", "statuses", "empty statuses"),
    ({"since": SINCE, "statuses": ["pending"]}, "invalid_field", "statuses", "a status in flight"),
    ({"since": SINCE, "statuses": ["exploded"]}, "invalid_field", "statuses", "an unknown status"),
    ({"since": SINCE, "statuses": ["Dead"]}, "invalid_field", "statuses", "statuses are case-sensitive"),
    ({"since": SINCE, "statuses": [None]}, "invalid_field", "statuses", "a null status"),
    ({"since": SINCE, "statuses": [["dead"]]}, "invalid_field", "statuses", "a nested array of statuses"),
    ({"since": SINCE, "statuses": [1]}, "invalid_field", "statuses", "a numeric status"),
    ({"since": SINCE, "statuses": ["dead"] * 4}, "invalid_field", "statuses", "too many statuses"),
    ({"since": SINCE, "statuses": ["x" * 10000]}, "invalid_field", "statuses", "an over-long status"),
    ({"since": SINCE, "dry_run": "true"}, "invalid_field", "dry_run", "dry_run as text"),
    ({"since": SINCE, "dry_run": 1}, "invalid_field", "dry_run", "dry_run as a number"),
    ({"since": SINCE, "dry_run": None}, "invalid_field", "dry_run", "a null dry_run"),
    ({"since": SINCE, "dry_run": [True]}, "invalid_field", "dry_run", "dry_run in an array"),
    ({"since": SINCE, "count": 10**400}, "invalid_field", "count", "a huge unknown number"),
    ({"since": SINCE, "limit": 5}, "invalid_field", "limit", "an unknown field"),
]


@pytest.mark.parametrize("sent,code,param", [c[:3] for c in RECOVER_CASES], ids=[c[3] for c in RECOVER_CASES])
def test_bad_recover_bodies(client, acme, sent, code, param):
    sub = create(client, acme).get_json()
    response = client.post(f"/api/v1/webhooks/{sub['id']}/recover", json=sent, headers=acme)
    assert_error(response, 400, code, param)
    assert WebhookRecovery.select().count() == 0


@pytest.mark.parametrize(
    "raw",
    ["{", "[]", '"x"', "null", "1e999", '{"since": NaN}', "[" * 5000, '{"since": "\\ud800"}'],
    ids=[
        "truncated json",
        "an array body",
        "a string body",
        "a null body",
        "an infinite number",
        "a NaN",
        "nesting too deep",
        "a lone surrogate",
    ],
)
def test_recover_bodies_that_are_not_json_objects(client, acme, raw):
    sub = create(client, acme).get_json()
    response = client.post(
        f"/api/v1/webhooks/{sub['id']}/recover", data=raw, content_type="application/json", headers=acme
    )
    assert response.status_code == 400 and response.get_json()["error"]["code"] in (
        "invalid_json",
        "invalid_field",
    )
    assert WebhookRecovery.select().count() == 0


def test_a_recover_without_a_body_is_missing_since(client, acme):
    sub = create(client, acme).get_json()
    assert_error(
        client.post(f"/api/v1/webhooks/{sub['id']}/recover", headers=acme), 400, "missing_field", "since"
    )


def test_a_recover_form_body_is_415(client, acme):
    sub = create(client, acme).get_json()
    response = client.post(f"/api/v1/webhooks/{sub['id']}/recover", data={"since": SINCE}, headers=acme)
    assert_error(response, 415, "unsupported_media_type")
    assert WebhookRecovery.select().count() == 0


def test_a_recover_text_body_is_415(client, acme):
    sub = create(client, acme).get_json()
    response = client.post(
        f"/api/v1/webhooks/{sub['id']}/recover",
        data=json.dumps({"since": SINCE}),
        content_type="text/plain",
        headers=acme,
    )
    assert_error(response, 415, "unsupported_media_type")


@pytest.mark.parametrize(
    "key", ["", " ", "k" * 256, "key with spaces"], ids=["empty", "blank", "too long", "spaces"]
)
def test_a_bad_idempotency_key_on_recover_is_400(client, acme, key):
    sub = create(client, acme).get_json()
    response = client.post(
        f"/api/v1/webhooks/{sub['id']}/recover",
        json={"since": SINCE},
        headers={**acme, "Idempotency-Key": key},
    )
    assert_error(response, 400, "invalid_idempotency_key", "Idempotency-Key")


@pytest.mark.parametrize(
    "query",
    [
        "window=1h",
        "window=24H",
        "window=",
        "window=7d&window=24h",
        "window[]=7d",
        "window=" + "9" * 5000,
        "window=%00",
    ],
    ids=lambda q: f"stats query {q[:30]}",
)
def test_bad_stats_queries_are_400(client, acme, query):
    sub = create(client, acme).get_json()
    response = client.get(f"/api/v1/webhooks/{sub['id']}/stats?{query}", headers=acme)
    assert_error(response, 400, "invalid_query", "window")


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        "limit=101",
        "limit=x",
        "limit=99999999999999999999",
        "limit=1&limit=2",
        "cursor=abc",
        "cursor[x]=1",
    ],
    ids=lambda q: f"attempts query {q}",
)
def test_bad_attempt_list_queries_are_400(client, acme, query):
    sub = create(client, acme).get_json()
    response = client.get(
        f"/api/v1/webhooks/{sub['id']}/deliveries/whd_nope00000000/attempts?{query}", headers=acme
    )
    assert response.status_code == 400
    assert response.get_json()["error"]["code"] in ("invalid_query", "invalid_cursor")


@pytest.mark.parametrize(
    "delivery_id",
    ["whd_x", "x" * 5000, "%00", "whd_%F0%9F%92%A9", "summary2", "123"],
    ids=["short", "huge", "a NUL", "an emoji", "a word", "a number"],
)
@pytest.mark.parametrize("suffix", ["", "/attempts"], ids=["delivery", "attempts"])
def test_unknown_or_malformed_delivery_ids_are_404(client, acme, delivery_id, suffix):
    sub = create(client, acme).get_json()
    response = client.get(f"/api/v1/webhooks/{sub['id']}/deliveries/{delivery_id}{suffix}", headers=acme)
    assert_error(response, 404, "not_found", "delivery_id")


@pytest.mark.parametrize(
    "method,path",
    [
        ("get", "/recover"),
        ("put", "/recover"),
        ("post", "/stats"),
        ("delete", "/stats"),
        ("post", "/deliveries/whd_x00000000"),
        ("post", "/deliveries/whd_x00000000/attempts"),
    ],
    ids=lambda v: v,
)
def test_wrong_methods_on_the_new_routes_are_405(client, acme, method, path):
    sub = create(client, acme).get_json()
    assert_error(
        getattr(client, method)(f"/api/v1/webhooks/{sub['id']}{path}", headers=acme),
        405,
        "method_not_allowed",
    )
    assert WebhookDelivery.select().count() == 0

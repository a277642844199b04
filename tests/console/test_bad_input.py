"""Bad input to the console: unknown and other tenants' ids, forged form fields, odd queries and
bodies each get a friendly HTML page with a 4xx status, never a 500, and a refused write changes nothing."""

import pytest

from shop.models import Notification, WebhookDelivery, WebhookRecovery
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.console import assert_page, csrf_token, fill_ids, page_text, sign_in
from tests.helpers.webhooks import create

TOKEN = "sk_test_acme_token_0001"
LONG = "9" * 5000


@pytest.fixture
def world(client, load):
    """acme and globex, each with a subscription, a delivery and a notification; acme signed in."""
    ids = {}
    for tenant, note_id in (("acme", 50), ("globex", 60)):
        notes = [{"id": note_id, "scope": "global", "type": "x", "message": f"{tenant} note"}]
        load(tenant_fixture(tenant, notifications=notes))
        headers = auth_headers(f"sk_test_{tenant}_token_0001")
        sub = create(client, headers, events=["*"]).get_json()["id"]
        delivery = client.post(f"/api/v1/webhooks/{sub}/ping", headers=headers).get_json()["id"]
        WebhookDelivery.update(status="dead").where(WebhookDelivery.id == delivery).execute()
        ids[tenant] = {"sub": sub, "delivery": delivery, "note": str(note_id)}
    ids["csrf"] = sign_in(client, TOKEN)
    return ids


GET_CASES = [
    ("/console/webhooks/whsub_doesnotexist", 404, "an unknown subscription"),
    ("/console/webhooks/{globex.sub}", 404, "another tenant's subscription"),
    ("/console/webhooks/" + "x" * 3000, 404, "an over-long subscription id"),
    ("/console/webhooks/whsub_%00", 404, "a NUL in the subscription id"),
    ("/console/webhooks/{acme.sub}/deliveries/whd_doesnotexist", 404, "an unknown delivery"),
    ("/console/webhooks/{acme.sub}/deliveries/{globex.delivery}", 404, "another tenant's delivery"),
    (
        "/console/webhooks/{globex.sub}/deliveries/{globex.delivery}",
        404,
        "another tenant's subscription and delivery",
    ),
    ("/console/webhooks/{acme.sub}?status=bogus", 400, "an unknown status filter"),
    ("/console/webhooks/{acme.sub}?status=dead&status=failed", 400, "a repeated status filter"),
    ("/console/webhooks/{acme.sub}?window=1y", 400, "an unknown stats window"),
    ("/console/webhooks/{acme.sub}?cursor=garbage", 400, "a forged cursor"),
    ("/console/webhooks?cursor=" + LONG, 400, "an over-long cursor"),
    ("/console/webhooks/{acme.sub}?recovery=whrec_%00", 200, "a NUL in the recovery shown (none is)"),
    ("/console/webhooks/{acme.sub}?recovery=" + LONG, 400, "an over-long recovery id"),
    ("/console/inbox?view=everything", 400, "an unknown inbox view"),
    ("/console/inbox?cursor=%FF%FE", 400, "a cursor that is not text"),
    ("/console/nowhere", 404, "an unknown console page"),
    ("/console/assets/../../setup.cfg", 404, "a path out of the assets"),
    ("/console/assets/secret_key", 404, "an asset that is not the console's"),
]


@pytest.mark.parametrize("path, status", [pytest.param(p, s, id=i) for p, s, i in GET_CASES])
def test_bad_page_requests_get_a_friendly_page(client, world, path, status):
    response = client.get(fill_ids(path, world))
    assert_page(response, status)
    assert "<h1>" in page_text(response)


POST_CASES = [
    ("/console/inbox/archive", {"notification_id": "abc"}, 400, "a non-numeric notification id"),
    ("/console/inbox/archive", {"notification_id": "99999999999999999999"}, 400, "a huge notification id"),
    ("/console/inbox/archive", {"notification_id": "-1"}, 400, "a negative notification id"),
    ("/console/inbox/archive", {"notification_id": "0"}, 400, "a zero notification id"),
    ("/console/inbox/archive", {"notification_id": "1.5"}, 400, "a fractional notification id"),
    ("/console/inbox/archive", {}, 400, "a missing notification id"),
    ("/console/inbox/archive", {"notification_id": ["{acme.note}", "{acme.note}"]}, 400, "a repeated id"),
    ("/console/inbox/archive", {"notification_id": LONG}, 400, "an over-long notification id"),
    ("/console/inbox/archive", {"notification_id": "2147483647"}, 404, "an unknown notification"),
    ("/console/inbox/archive", {"notification_id": "{globex.note}"}, 404, "another tenant's notification"),
    (
        "/console/inbox/read",
        {"notification_id": "{globex.note}"},
        404,
        "reading another tenant's notification",
    ),
    ("/console/webhooks/{acme.sub}/recover", {"mode": "recover"}, 400, "recover without since"),
    ("/console/webhooks/{acme.sub}/recover", {"since": "yesterday"}, 400, "recover with a made-up date"),
    ("/console/webhooks/{acme.sub}/recover", {"since": "2026-02-30T10:00"}, 400, "recover with no such day"),
    ("/console/webhooks/{acme.sub}/recover", {"since": LONG}, 400, "recover with an over-long since"),
    (
        "/console/webhooks/{acme.sub}/recover",
        {"since": "2026-01-02T00:00", "until": "2026-01-01T00:00", "mode": "recover"},
        400,
        "recover with until before since",
    ),
    (
        "/console/webhooks/{acme.sub}/recover",
        {"since": "2026-01-01T00:00", "statuses": "pending", "mode": "recover"},
        400,
        "recover of a status that is not finished",
    ),
    (
        "/console/webhooks/{acme.sub}/recover",
        {"since": "2026-01-01T00:00", "statuses": ["dead"] * 5},
        400,
        "recover with a status sent many times",
    ),
    (
        "/console/webhooks/{globex.sub}/recover",
        {"since": "2026-01-01T00:00"},
        404,
        "another tenant's recover",
    ),
    ("/console/webhooks/{globex.sub}/ping", {}, 404, "pinging another tenant's subscription"),
    ("/console/webhooks/whsub_x/rotate-secret", {}, 404, "rotating an unknown subscription"),
    (
        "/console/webhooks/{acme.sub}/deliveries/{globex.delivery}/redeliver",
        {},
        404,
        "redelivering another tenant's delivery",
    ),
    (
        "/console/webhooks/{acme.sub}/deliveries/" + "w" * 500 + "/redeliver",
        {},
        404,
        "an over-long delivery id",
    ),
    ("/console/sign-out", {"csrf_token": "forged"}, 403, "a forged CSRF token"),
]


@pytest.mark.parametrize("path, form, status", [pytest.param(p, f, s, id=i) for p, f, s, i in POST_CASES])
def test_forged_forms_get_a_friendly_page_and_change_nothing(client, world, path, form, status):
    before = _state()
    data = {"csrf_token": world["csrf"], **{k: fill_ids(v, world) for k, v in form.items()}}
    response = client.post(fill_ids(path, world), data=data)
    assert_page(response, status)
    assert _state() == before


def _state() -> tuple:
    notes = tuple(Notification.select(Notification.id, Notification.read, Notification.archived).tuples())
    deliveries = tuple(WebhookDelivery.select(WebhookDelivery.id, WebhookDelivery.status).tuples())
    return notes, deliveries, WebhookRecovery.select().count()


def test_an_oversized_form_is_a_413_page(client, world):
    response = client.post(
        "/console/inbox/archive",
        data={"csrf_token": world["csrf"], "notification_id": "1" * (4 * 1024 * 1024)},
    )
    assert response.status_code == 413 and response.mimetype == "text/html"


def test_a_json_body_is_no_form_and_is_refused_by_the_csrf_check(client, world):
    response = client.post(
        "/console/inbox/archive", json={"csrf_token": world["csrf"], "notification_id": 50}
    )
    assert response.status_code == 403 and response.mimetype == "text/html"


@pytest.mark.parametrize(
    "api_key, status",
    [
        pytest.param("", 400, id="an empty key"),
        pytest.param("k" * 300, 400, id="an over-long key"),
        pytest.param("sk_test_globex_token_0001\x00", 401, id="a key with a NUL"),
    ],
)
def test_odd_keys_on_the_sign_in_form_are_refused_with_a_page(client, world, api_key, status):
    client.post("/console/sign-out", data={"csrf_token": world["csrf"]})
    form = client.get("/console/sign-in")
    token = csrf_token(page_text(form))
    response = client.post("/console/sign-in", data={"csrf_token": token, "api_key": api_key})
    assert response.status_code == status and response.mimetype == "text/html"

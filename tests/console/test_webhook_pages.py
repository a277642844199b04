"""The console's Webhooks and Inbox pages through the test client: what they show, what their forms do."""

import pytest

from shop.models import WebhookDelivery, WebhookRecovery, WebhookSubscription
from tests.helpers import ALL_SCOPES, auth_headers, tenant_fixture
from tests.helpers.console import page_text, sign_in
from tests.helpers.webhooks import create

TOKEN = "sk_test_acme_token_0001"
API = auth_headers(TOKEN)


@pytest.fixture
def hooked(client, load):
    """acme with a subscription, one dead and one pending delivery; returns (sub id, dead, pending)."""
    load(tenant_fixture("acme"))
    sub = create(client, API, events=["*"]).get_json()["id"]
    dead = client.post(f"/api/v1/webhooks/{sub}/ping", headers=API).get_json()["id"]
    pending = client.post(f"/api/v1/webhooks/{sub}/ping", headers=API).get_json()["id"]
    WebhookDelivery.update(status="dead", attempts=8, last_status_code=500).where(
        WebhookDelivery.id == dead
    ).execute()
    return sub, dead, pending


def test_the_subscription_list_and_page_show_stats_and_deliveries(client, hooked):
    sub, dead, pending = hooked
    sign_in(client, TOKEN)
    listing = page_text(client.get("/console/webhooks"))
    assert "https://hooks.example.com/repair-shop" in listing and f"/console/webhooks/{sub}" in listing
    page = page_text(client.get(f"/console/webhooks/{sub}"))
    assert "Stats, last 24h" in page and dead in page and pending in page
    assert "dead 1" in page and "pending 1" in page
    only_dead = page_text(client.get(f"/console/webhooks/{sub}?status=dead"))
    assert dead in only_dead and pending not in only_dead
    assert "Stats, last 7d" in page_text(client.get(f"/console/webhooks/{sub}?window=7d"))


def test_redeliver_queues_a_dead_delivery_again(client, hooked):
    sub, dead, _ = hooked
    token = sign_in(client, TOKEN)
    response = client.post(f"/console/webhooks/{sub}/deliveries/{dead}/redeliver", data={"csrf_token": token})
    assert response.status_code == 303
    assert response.headers["Location"] == f"/console/webhooks/{sub}/deliveries/{dead}?done=redelivered"
    assert WebhookDelivery.get_by_id(dead).status == "pending"
    shown = page_text(client.get(response.headers["Location"]))
    assert "Queued again" in shown and "status-pending" in shown


def test_redelivering_one_in_flight_shows_the_api_s_refusal(client, hooked):
    sub, _, pending = hooked
    token = sign_in(client, TOKEN)
    response = client.post(
        f"/console/webhooks/{sub}/deliveries/{pending}/redeliver", data={"csrf_token": token}
    )
    assert response.status_code == 422 and "still pending or retrying" in page_text(response)


def test_ping_shows_its_new_delivery(client, hooked):
    sub, _, _ = hooked
    token = sign_in(client, TOKEN)
    response = client.post(f"/console/webhooks/{sub}/ping", data={"csrf_token": token})
    assert response.status_code == 303 and "done=pinged" in response.headers["Location"]
    assert WebhookDelivery.select().count() == 3
    assert "webhook.ping" in page_text(client.get(response.headers["Location"]))


def test_rotate_shows_the_new_secret_once_and_never_caches_it(client, hooked):
    sub, _, _ = hooked
    token = sign_in(client, TOKEN)
    before = WebhookSubscription.get_by_id(sub).secret_generation
    response = client.post(f"/console/webhooks/{sub}/rotate-secret", data={"csrf_token": token})
    assert response.status_code == 200 and response.headers["Cache-Control"] == "no-store"
    assert "whsec_" in page_text(response)
    assert WebhookSubscription.get_by_id(sub).secret_generation == before + 1
    again = client.post(f"/console/webhooks/{sub}/rotate-secret", data={"csrf_token": token})
    assert again.status_code == 409 and "whsec_" not in page_text(again)
    assert "whsec_" not in page_text(client.get(f"/console/webhooks/{sub}"))


def test_recover_dry_run_shows_its_count_and_changes_nothing(client, hooked):
    sub, dead, _ = hooked
    token = sign_in(client, TOKEN)
    form = {
        "csrf_token": token,
        "since": "2000-01-01T00:00",
        "statuses": ["dead", "failed"],
        "mode": "dry_run",
    }
    response = client.post(f"/console/webhooks/{sub}/recover", data=form)
    assert response.status_code == 303 and "recovery=whrec_" in response.headers["Location"]
    assert "Dry run: 1 deliveries match." in page_text(client.get(response.headers["Location"]))
    assert WebhookDelivery.get_by_id(dead).status == "dead"
    started = client.post(f"/console/webhooks/{sub}/recover", data={**form, "mode": "recover"})
    assert "Recovery started: 1 deliveries" in page_text(client.get(started.headers["Location"]))
    assert WebhookRecovery.select().where(WebhookRecovery.dry_run == False).count() == 1  # noqa: E712


@pytest.mark.parametrize(
    "scopes, webhooks_status, nav_has_webhooks",
    [
        pytest.param(["webhooks.read"], 200, True, id="webhooks.read sees the pages"),
        pytest.param(["notifications.read"], 403, False, id="without webhooks.read the pages are 403"),
    ],
)
def test_the_nav_and_pages_follow_the_key_s_scopes(client, load, scopes, webhooks_status, nav_has_webhooks):
    load(tenant_fixture("acme", scopes=scopes))
    sign_in(client, TOKEN)
    overview = page_text(client.get("/console/"))
    assert ('href="/console/webhooks"' in overview) is nav_has_webhooks
    assert client.get("/console/webhooks").status_code == webhooks_status
    assert client.get("/console/webhooks/whsub_nope").status_code in (webhooks_status, 404)


def test_a_read_only_key_sees_no_action_forms_and_cannot_post_them(client, load):
    load(tenant_fixture("acme", scopes=ALL_SCOPES))
    sub = create(client, API).get_json()["id"]
    load(tenant_fixture("ro", scopes=["webhooks.read"]))
    # the read-only key belongs to another tenant: it sees acme's subscription as missing
    token = sign_in(client, "sk_test_ro_token_0001")
    assert client.get(f"/console/webhooks/{sub}").status_code == 404
    assert client.post(f"/console/webhooks/{sub}/ping", data={"csrf_token": token}).status_code == 403


def test_archiving_a_notification_lowers_the_unread_count(client, load):
    notes = [
        {"id": 50, "scope": "global", "type": "new_ticket", "message": "New ticket 1001"},
        {"id": 51, "scope": "global", "type": "new_ticket", "message": "New ticket 1002"},
        {"id": 52, "scope": "global", "type": "new_ticket", "message": "Old news", "read": True},
    ]
    load(tenant_fixture("acme", notifications=notes))
    token = sign_in(client, TOKEN)
    assert "2 unread" in page_text(client.get("/console/inbox"))
    response = client.post("/console/inbox/archive", data={"csrf_token": token, "notification_id": "50"})
    assert response.status_code == 303
    page = page_text(client.get(response.headers["Location"]))
    assert "1 unread" in page and "New ticket 1001" not in page and "Archived." in page
    client.post("/console/inbox/read", data={"csrf_token": token, "notification_id": "51"})
    assert "0 unread" in page_text(client.get("/console/inbox"))
    client.post("/console/inbox/archive-read", data={"csrf_token": token})
    assert "Nothing in the inbox." in page_text(client.get("/console/inbox"))
    archived = page_text(client.get("/console/inbox?view=archived"))
    assert all(text in archived for text in ("New ticket 1001", "New ticket 1002", "Old news"))

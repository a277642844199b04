"""The estimate endpoints: list, create, retrieve, update while draft, send, approve, decline."""

import pytest

from shop.models import UsageLog
from tests.helpers import assert_error, logged_rows, tenant_fixture
from tests.helpers.money import (
    ACME,
    GLOBEX,
    ITEMS,
    TOTAL,
    acme_fixture,
    event_types,
    events,
    globex_fixture,
    post,
    snapshot,
)

BASE = "/api/v1/estimates"
KEYS = {
    "object",
    "id",
    "number",
    "ticket_id",
    "customer_id",
    "status",
    "currency",
    "line_items",
    "total",
    "sent_at",
    "approved_at",
    "approved_by",
    "declined_at",
    "declined_by",
    "decline_reason",
    "created_at",
    "updated_at",
}


@pytest.fixture
def shop(load):
    load(acme_fixture(), globex_fixture())
    return ACME


def draft(client, ticket_id="1001", **fields) -> dict:
    return post(client, BASE, {"ticket_id": ticket_id, "line_items": ITEMS, **fields})


def test_create_drafts_an_estimate_priced_by_its_line_items_and_emits_nothing(client, shop):
    body = draft(client, ticket_id=1001, currency="eur")
    assert set(body) == KEYS and body["object"] == "estimate"
    assert isinstance(body["id"], str) and body["number"] == f"EST-{body['id']}"
    assert (body["ticket_id"], body["customer_id"], body["status"], body["currency"]) == (
        "1001",
        "1",
        "draft",
        "eur",
    )
    assert body["total"] == TOTAL
    assert body["line_items"][1] == {**ITEMS[1], "amount": 3000}
    assert events() == []
    assert client.get(f"{BASE}/{body['id']}", headers=shop).get_json() == body


def test_send_then_approve_emits_the_full_estimate_then_the_lean_approval_by_the_key(client, shop):
    estimate = draft(client)
    sent = post(client, f"{BASE}/{estimate['id']}/send", status=200)
    assert sent["status"] == "sent" and sent["sent_at"].endswith("Z")
    approved = post(client, f"{BASE}/{estimate['id']}/approve", status=200)
    assert (approved["status"], approved["approved_by"]) == ("approved", "key_acme")
    assert event_types() == ["estimate.sent", "estimate.approved"]
    assert events("estimate.sent") == [sent]  # a full-DTO event is the GET answer of that moment
    assert events("estimate.approved") == [
        {
            "object": "estimate",
            "id": estimate["id"],
            "ticket_id": "1001",
            "status": "approved",
            "approved_at": approved["approved_at"],
            "approved_by": "key_acme",
            "source_kind": "observed",
        }
    ]


def test_decline_carries_the_reason_and_the_key(client, shop):
    estimate = draft(client)
    post(client, f"{BASE}/{estimate['id']}/send", status=200)
    declined = post(client, f"{BASE}/{estimate['id']}/decline", {"reason": "Too expensive"}, status=200)
    assert (declined["status"], declined["declined_by"], declined["decline_reason"]) == (
        "declined",
        "key_acme",
        "Too expensive",
    )
    [data] = events("estimate.declined")
    assert data == {
        "object": "estimate",
        "id": estimate["id"],
        "ticket_id": "1001",
        "status": "declined",
        "declined_at": declined["declined_at"],
        "declined_by": "key_acme",
        "decline_reason": "Too expensive",
        "source_kind": "observed",
    }


def test_decline_without_a_body_has_no_reason(client, shop):
    estimate = draft(client)
    post(client, f"{BASE}/{estimate['id']}/send", status=200)
    assert post(client, f"{BASE}/{estimate['id']}/decline", status=200)["decline_reason"] is None


def test_update_changes_a_draft_and_reprices_it(client, shop):
    estimate = draft(client)
    items = [{"description": "Battery", "quantity": 3, "unit_amount": 999}]
    response = client.patch(f"{BASE}/{estimate['id']}", json={"line_items": items}, headers=shop)
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["total"] == 2997 and body["line_items"] == [{**items[0], "amount": 2997}]
    assert body["updated_at"] is not None and events() == []


@pytest.mark.parametrize(
    "steps, action, body",
    [
        ([], "approve", None),
        ([], "decline", {"reason": "No"}),
        (["send", "approve"], "send", None),
        (["send", "decline"], "send", None),
        (["send", "approve"], "approve", None),
        (["send", "approve"], "decline", None),
        (["send", "decline"], "approve", None),
    ],
    ids=[
        "a draft is not approved through the API",
        "a draft is not declined through the API",
        "an approved estimate is not sent again",
        "a declined estimate is not sent again",
        "an approved estimate is not approved again",
        "an approved estimate is not declined",
        "a declined estimate is not approved",
    ],
)
def test_business_rule_refusals_are_unprocessable_and_write_nothing(client, shop, steps, action, body):
    estimate = draft(client)
    for step in steps:
        post(client, f"{BASE}/{estimate['id']}/{step}", status=200)
    before = snapshot()
    response = client.post(f"{BASE}/{estimate['id']}/{action}", json=body, headers=shop)
    assert_error(response, 422, "unprocessable")
    assert snapshot() == before


def test_an_edit_of_a_sent_estimate_is_unprocessable(client, shop):
    estimate = draft(client)
    post(client, f"{BASE}/{estimate['id']}/send", status=200)
    before = snapshot()
    response = client.patch(f"{BASE}/{estimate['id']}", json={"currency": "eur"}, headers=shop)
    assert_error(response, 422, "unprocessable")
    assert snapshot() == before


@pytest.mark.parametrize(
    "ticket_id", ["1003", "1004", "2001", "999999"], ids=["hidden", "deleted", "other tenant", "missing"]
)
def test_create_for_a_ticket_not_visible_is_not_found(client, shop, ticket_id):
    before = snapshot()
    response = client.post(BASE, json={"ticket_id": ticket_id, "line_items": ITEMS}, headers=shop)
    assert_error(response, 404, "not_found", "ticket_id")
    assert snapshot() == before


@pytest.mark.parametrize(
    "method, suffix",
    [("get", ""), ("patch", ""), ("post", "/send"), ("post", "/approve"), ("post", "/decline")],
)
@pytest.mark.parametrize("estimate_id", [5009, 5900, 77777], ids=["hidden ticket", "other tenant", "missing"])
def test_estimates_not_visible_are_not_found(client, shop, method, suffix, estimate_id):
    body = {"currency": "eur"} if method == "patch" else None
    response = getattr(client, method)(f"{BASE}/{estimate_id}{suffix}", json=body, headers=shop)
    assert_error(response, 404, "not_found", "id")


def test_list_is_newest_first_filters_and_hides_estimates_of_hidden_tickets(client, shop):
    made = [draft(client, ticket)["id"] for ticket in ("1001", "1002", "1001")]
    post(client, f"{BASE}/{made[0]}/send", status=200)
    listed = client.get(BASE, headers=shop).get_json()
    assert listed["object"] == "list" and listed["has_more"] is False and listed["next_cursor"] is None
    assert [e["id"] for e in listed["data"]] == made[::-1]  # never 5009 (hidden) nor 5900 (globex)
    by_ticket = client.get(f"{BASE}?ticket_id=1001", headers=shop).get_json()["data"]
    assert [e["id"] for e in by_ticket] == [made[2], made[0]]
    sent = client.get(f"{BASE}?status=sent", headers=shop).get_json()["data"]
    assert [e["id"] for e in sent] == [made[0]]
    assert client.get(f"{BASE}?ticket_id=1003", headers=shop).get_json()["data"] == []


def test_cursor_pages_through_every_estimate_once(client, shop):
    made = [draft(client)["id"] for _ in range(5)]
    seen, cursor = [], None
    while True:
        query = f"{BASE}?limit=2" + (f"&cursor={cursor}" if cursor else "")
        page = client.get(query, headers=shop).get_json()
        seen += [e["id"] for e in page["data"]]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            break
    assert seen == made[::-1]
    other = client.get(f"{BASE}?limit=2&status=draft&cursor={cursor or 'x.y'}", headers=shop)
    assert_error(other, 400, "invalid_cursor", "cursor")


def test_idempotency_key_replays_the_create(client, shop):
    headers = {**shop, "Idempotency-Key": "estimate-1"}
    body = {"ticket_id": "1001", "line_items": ITEMS}
    first = client.post(BASE, json=body, headers=headers)
    second = client.post(BASE, json=body, headers=headers)
    assert first.status_code == second.status_code == 201
    assert first.get_json() == second.get_json()
    assert len(client.get(BASE, headers=shop).get_json()["data"]) == 1
    changed = client.post(BASE, json={**body, "currency": "eur"}, headers=headers)
    assert changed.status_code == 409


def test_scopes_read_cannot_write_and_no_scope_cannot_read(client, load):
    load(acme_fixture(scopes=["estimates.read"]), tenant_fixture("globex", scopes=["tickets.read"]))
    error = assert_error(
        client.post(BASE, json={"ticket_id": "1001", "line_items": ITEMS}, headers=ACME),
        403,
        "insufficient_scope",
    )
    assert error["details"]["required_scope"] == "estimates.write"
    assert client.get(BASE, headers=ACME).status_code == 200
    error = assert_error(client.get(BASE, headers=GLOBEX), 403, "insufficient_scope")
    assert error["details"]["required_scope"] == "estimates.read"


def test_requests_are_usage_logged_for_the_key(client, shop):
    estimate = draft(client)
    client.get(f"{BASE}/{estimate['id']}", headers=shop)
    rows = [(row.api_key_id, row.method, row.path, row.status) for row in logged_rows().order_by(UsageLog.id)]
    assert rows == [("key_acme", "POST", BASE, 201), ("key_acme", "GET", f"{BASE}/<id>", 200)]

"""The invoice endpoints: list, create, retrieve, update while draft, send, void."""

import pytest

from tests.helpers import assert_error, tenant_fixture
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

BASE = "/api/v1/invoices"
KEYS = {
    "object",
    "id",
    "number",
    "customer_id",
    "ticket_id",
    "status",
    "currency",
    "line_items",
    "total",
    "amount_paid",
    "amount_refunded",
    "amount_due",
    "sent_at",
    "paid_at",
    "voided_at",
    "void_reason",
    "created_at",
    "updated_at",
}


@pytest.fixture
def shop(load):
    load(acme_fixture(), globex_fixture())
    return ACME


def draft(client, **fields) -> dict:
    return post(client, BASE, {"ticket_id": "1001", "line_items": ITEMS, **fields})


def test_create_drafts_an_invoice_priced_by_its_line_items_and_emits_invoice_created(client, shop):
    body = draft(client)
    assert set(body) == KEYS and body["object"] == "invoice" and body["number"] == f"INV-{body['id']}"
    assert (body["ticket_id"], body["customer_id"], body["status"], body["currency"]) == (
        "1001",
        "1",
        "draft",
        "usd",
    )
    assert (body["total"], body["amount_paid"], body["amount_refunded"], body["amount_due"]) == (
        TOTAL,
        0,
        0,
        TOTAL,
    )
    assert [item["amount"] for item in body["line_items"]] == [12000, 3000]
    assert events() == [body]  # the API's full DTO: the GET answer, with no source_kind
    assert client.get(f"{BASE}/{body['id']}", headers=shop).get_json() == body


def test_create_for_a_customer_alone_and_a_ticket_of_another_customer(client, shop):
    body = post(client, BASE, {"customer_id": "2", "line_items": ITEMS})
    assert (body["customer_id"], body["ticket_id"]) == ("2", None)
    response = client.post(
        BASE, json={"ticket_id": "1001", "customer_id": 2, "line_items": ITEMS}, headers=shop
    )
    assert_error(response, 400, "invalid_field", "customer_id")


def test_send_then_void_with_their_events(client, shop):
    invoice = draft(client)
    sent = post(client, f"{BASE}/{invoice['id']}/send", status=200)
    assert sent["status"] == "sent" and sent["sent_at"].endswith("Z")
    voided = post(client, f"{BASE}/{invoice['id']}/void", {"reason": "Duplicate"}, status=200)
    assert (voided["status"], voided["void_reason"]) == ("void", "Duplicate") and voided["voided_at"]
    assert event_types() == ["invoice.created", "invoice.sent", "invoice.voided"]
    assert events()[1:] == [sent, voided]


def test_update_reprices_a_draft_and_emits_nothing(client, shop):
    invoice = draft(client)
    items = [{"description": "Labour", "quantity": 2, "unit_amount": 4500}]
    response = client.patch(
        f"{BASE}/{invoice['id']}", json={"line_items": items, "currency": "cad"}, headers=shop
    )
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert (body["total"], body["amount_due"], body["currency"]) == (9000, 9000, "cad")
    assert event_types() == ["invoice.created"]


def test_business_rule_refusals_are_unprocessable_and_write_nothing(client, shop):
    invoice = draft(client)
    post(client, f"{BASE}/{invoice['id']}/send", status=200)
    checks = [
        ("patch", "", {"currency": "eur"}),  # an edit of a sent invoice
    ]
    post(client, "/api/v1/payments", {"invoice_id": invoice["id"], "amount": TOTAL, "method": "cash"})
    checks += [("post", "/void", None), ("post", "/send", None), ("patch", "", {"currency": "eur"})]
    for method, suffix, body in checks:
        before = snapshot()
        response = getattr(client, method)(f"{BASE}/{invoice['id']}{suffix}", json=body, headers=shop)
        assert_error(response, 422, "unprocessable")
        assert snapshot() == before


def test_a_draft_with_a_part_payment_is_neither_voided_nor_edited(client, shop):
    invoice = draft(client)
    post(client, "/api/v1/payments", {"invoice_id": invoice["id"], "amount": 100, "method": "cash"})
    before = snapshot()
    assert_error(client.post(f"{BASE}/{invoice['id']}/void", headers=shop), 422, "unprocessable")
    response = client.patch(f"{BASE}/{invoice['id']}", json={"currency": "eur"}, headers=shop)
    assert_error(response, 422, "unprocessable")
    assert snapshot() == before


def test_a_void_invoice_is_not_voided_again(client, shop):
    invoice = draft(client)
    post(client, f"{BASE}/{invoice['id']}/void", status=200)
    assert_error(client.post(f"{BASE}/{invoice['id']}/void", headers=shop), 422, "unprocessable")


@pytest.mark.parametrize(
    "body, param",
    [
        ({"ticket_id": "1003"}, "ticket_id"),
        ({"ticket_id": "1004"}, "ticket_id"),
        ({"ticket_id": "2001"}, "ticket_id"),
        ({"customer_id": "9"}, "customer_id"),
        ({"customer_id": "12345"}, "customer_id"),
    ],
    ids=[
        "hidden ticket",
        "deleted ticket",
        "other tenant's ticket",
        "other tenant's customer",
        "missing customer",
    ],
)
def test_create_naming_what_is_not_visible_is_not_found(client, shop, body, param):
    before = snapshot()
    response = client.post(BASE, json={**body, "line_items": ITEMS}, headers=shop)
    assert_error(response, 404, "not_found", param)
    assert snapshot() == before


@pytest.mark.parametrize("method, suffix", [("get", ""), ("patch", ""), ("post", "/send"), ("post", "/void")])
@pytest.mark.parametrize("invoice_id", [3009, 3900, 77777], ids=["hidden ticket", "other tenant", "missing"])
def test_invoices_not_visible_are_not_found(client, shop, method, suffix, invoice_id):
    body = {"currency": "eur"} if method == "patch" else None
    response = getattr(client, method)(f"{BASE}/{invoice_id}{suffix}", json=body, headers=shop)
    assert_error(response, 404, "not_found", "id")


def test_list_newest_first_with_filters_paging_and_no_hidden_ticket_invoices(client, shop):
    made = [draft(client, ticket_id=t)["id"] for t in ("1001", "1002", "1001", "1002", "1001")]
    post(client, f"{BASE}/{made[1]}/send", status=200)
    listed = client.get(BASE, headers=shop).get_json()
    assert [i["id"] for i in listed["data"]] == made[::-1]  # never 3009 (hidden ticket) nor 3900
    assert listed["data"][-1]["amount_due"] == TOTAL
    assert [i["id"] for i in client.get(f"{BASE}?ticket_id=1002", headers=shop).get_json()["data"]] == [
        made[3],
        made[1],
    ]
    assert [i["id"] for i in client.get(f"{BASE}?status=sent", headers=shop).get_json()["data"]] == [made[1]]
    assert len(client.get(f"{BASE}?customer_id=1", headers=shop).get_json()["data"]) == 3
    seen, cursor = [], None
    while True:
        page = client.get(
            f"{BASE}?limit=2" + (f"&cursor={cursor}" if cursor else ""), headers=shop
        ).get_json()
        seen += [i["id"] for i in page["data"]]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            break
    assert seen == made[::-1]


def test_idempotency_key_replays_the_create_and_its_event_once(client, shop):
    headers = {**shop, "Idempotency-Key": "invoice-1"}
    body = {"ticket_id": "1001", "line_items": ITEMS}
    first, second = (client.post(BASE, json=body, headers=headers) for _ in range(2))
    assert first.status_code == second.status_code == 201 and first.get_json() == second.get_json()
    assert event_types() == ["invoice.created"]


def test_scopes(client, load):
    load(acme_fixture(scopes=["invoices.read"]), tenant_fixture("globex", scopes=["estimates.read"]))
    error = assert_error(
        client.post(BASE, json={"ticket_id": "1001", "line_items": ITEMS}, headers=ACME),
        403,
        "insufficient_scope",
    )
    assert error["details"]["required_scope"] == "invoices.write"
    assert client.get(BASE, headers=ACME).status_code == 200
    assert_error(client.get(BASE, headers=GLOBEX), 403, "insufficient_scope")

"""The payment and refund endpoints: record, list, retrieve; the amounts they move on the invoice."""

import pytest

from shop.db import db, on_postgres
from shop.models import Payment, Refund
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

PAYMENTS, REFUNDS, INVOICES = "/api/v1/payments", "/api/v1/refunds", "/api/v1/invoices"
PAYMENT_KEYS = {
    "object",
    "id",
    "invoice_id",
    "customer_id",
    "amount",
    "amount_refunded",
    "currency",
    "method",
    "status",
    "created_at",
}
REFUND_KEYS = {
    "object",
    "id",
    "payment_id",
    "invoice_id",
    "amount",
    "currency",
    "reason",
    "status",
    "created_at",
}


@pytest.fixture
def shop(load):
    load(acme_fixture(), globex_fixture())
    return ACME


@pytest.fixture
def invoice(client, shop) -> dict:
    """A sent invoice of TOTAL on ticket 1001; no events left over from making it."""
    from shop.models import Event

    made = post(client, INVOICES, {"ticket_id": "1001", "line_items": ITEMS})
    post(client, f"{INVOICES}/{made['id']}/send", status=200)
    Event.delete().execute()
    return made


def pay(client, invoice_id, amount, method="card", status=201) -> dict:
    return post(
        client, PAYMENTS, {"invoice_id": invoice_id, "amount": amount, "method": method}, status=status
    )


def get_invoice(client, invoice_id) -> dict:
    return client.get(f"{INVOICES}/{invoice_id}", headers=ACME).get_json()


def test_a_part_payment_is_recorded_and_the_invoice_shows_it(client, invoice):
    payment = pay(client, invoice["id"], 5000, "cash")
    assert set(payment) == PAYMENT_KEYS
    assert (payment["object"], payment["invoice_id"], payment["customer_id"]) == (
        "payment",
        invoice["id"],
        "1",
    )
    assert (payment["amount"], payment["amount_refunded"], payment["method"], payment["status"]) == (
        5000,
        0,
        "cash",
        "succeeded",
    )
    assert events() == [payment]
    after = get_invoice(client, invoice["id"])
    assert (after["status"], after["amount_paid"], after["amount_due"]) == ("sent", 5000, TOTAL - 5000)
    assert client.get(f"{PAYMENTS}/{payment['id']}", headers=ACME).get_json() == payment


def test_paying_in_full_pays_the_invoice_in_the_same_transaction(client, invoice):
    pay(client, invoice["id"], 5000)
    last = pay(client, invoice["id"], TOTAL - 5000)
    assert event_types() == ["payment.recorded", "payment.recorded", "invoice.paid"]
    paid = get_invoice(client, invoice["id"])
    assert (paid["status"], paid["amount_paid"], paid["amount_due"]) == ("paid", TOTAL, 0) and paid["paid_at"]
    assert events("invoice.paid") == [paid] and events("payment.recorded")[-1] == last
    if on_postgres():  # written by one transaction: PostgreSQL stamps each row with its writer's id
        ids = [
            row[0] for row in db.execute_sql("SELECT xmin::text FROM event ORDER BY created, id").fetchall()
        ]
        assert ids[-1] == ids[-2] != ids[0]


@pytest.mark.parametrize(
    "paid_before, amount",
    [(0, TOTAL + 1), (5000, TOTAL - 4999), (TOTAL, 1)],
    ids=["more than the total", "more than what is left due", "anything on a paid invoice"],
)
def test_a_payment_above_what_is_due_is_unprocessable_and_writes_nothing(
    client, invoice, paid_before, amount
):
    if paid_before:
        pay(client, invoice["id"], paid_before)
    before = snapshot()
    response = client.post(
        PAYMENTS, json={"invoice_id": invoice["id"], "amount": amount, "method": "card"}, headers=ACME
    )
    error = assert_error(response, 422, "unprocessable", "amount" if paid_before < TOTAL else "invoice_id")
    assert error["message"]
    assert snapshot() == before


def test_a_void_invoice_takes_no_payment(client, invoice):
    post(client, f"{INVOICES}/{invoice['id']}/void", status=200)
    response = client.post(
        PAYMENTS, json={"invoice_id": invoice["id"], "amount": 1, "method": "card"}, headers=ACME
    )
    assert_error(response, 422, "unprocessable", "invoice_id")


@pytest.mark.parametrize(
    "invoice_id", ["3009", "3900", "77777"], ids=["hidden ticket", "other tenant", "missing"]
)
def test_a_payment_on_an_invoice_not_visible_is_not_found(client, shop, invoice_id):
    before = snapshot()
    response = client.post(
        PAYMENTS, json={"invoice_id": invoice_id, "amount": 1, "method": "card"}, headers=ACME
    )
    assert_error(response, 404, "not_found", "invoice_id")
    assert snapshot() == before


@pytest.mark.parametrize(
    "path", [f"{PAYMENTS}/4009", f"{PAYMENTS}/4900", f"{REFUNDS}/6900", f"{PAYMENTS}/77"]
)
def test_payments_and_refunds_not_visible_are_not_found(client, shop, path):
    assert_error(client.get(path, headers=ACME), 404, "not_found", "id")


def test_a_refund_of_part_then_the_rest_of_a_payment(client, invoice):
    payment = pay(client, invoice["id"], TOTAL)
    refund = post(client, REFUNDS, {"payment_id": payment["id"], "amount": 4000, "reason": "Goodwill"})
    assert set(refund) == REFUND_KEYS
    assert (refund["object"], refund["payment_id"], refund["invoice_id"], refund["amount"]) == (
        "refund",
        payment["id"],
        invoice["id"],
        4000,
    )
    assert (refund["reason"], refund["status"], refund["currency"]) == ("Goodwill", "succeeded", "usd")
    after = get_invoice(client, invoice["id"])
    assert (after["status"], after["amount_refunded"], after["amount_due"]) == ("paid", 4000, 0)
    assert event_types()[-2:] == ["payment.refunded", "invoice.refunded"]
    assert events("payment.refunded") == [refund] and events("invoice.refunded") == [after]
    rest = post(client, REFUNDS, {"payment_id": int(payment["id"])})  # no amount: all that is left
    assert (rest["amount"], rest["reason"]) == (TOTAL - 4000, None)
    refunded = client.get(f"{PAYMENTS}/{payment['id']}", headers=ACME).get_json()
    assert (refunded["amount_refunded"], refunded["status"]) == (TOTAL, "refunded")
    assert client.get(f"{REFUNDS}/{rest['id']}", headers=ACME).get_json() == rest


@pytest.mark.parametrize("refunded_before, amount", [(0, TOTAL + 1), (TOTAL - 10, 11), (TOTAL, None)])
def test_a_refund_above_what_is_left_is_unprocessable_and_writes_nothing(
    client, invoice, refunded_before, amount
):
    payment = pay(client, invoice["id"], TOTAL)
    if refunded_before:
        post(client, REFUNDS, {"payment_id": payment["id"], "amount": refunded_before})
    before = snapshot()
    body = {"payment_id": payment["id"]} | ({} if amount is None else {"amount": amount})
    assert_error(client.post(REFUNDS, json=body, headers=ACME), 422, "unprocessable", "amount")
    assert snapshot() == before


@pytest.mark.parametrize(
    "payment_id", ["4009", "4900", "77777"], ids=["hidden ticket", "other tenant", "missing"]
)
def test_a_refund_of_a_payment_not_visible_is_not_found(client, shop, payment_id):
    before = snapshot()
    assert_error(
        client.post(REFUNDS, json={"payment_id": payment_id}, headers=ACME), 404, "not_found", "payment_id"
    )
    assert snapshot() == before


def test_lists_filter_page_and_hide_the_hidden_tickets_money(client, invoice):
    other = post(client, INVOICES, {"ticket_id": "1002", "line_items": ITEMS})
    made = [
        pay(client, invoice["id"], 1000)["id"],
        pay(client, other["id"], 1000)["id"],
        pay(client, invoice["id"], 1000)["id"],
    ]
    listed = client.get(PAYMENTS, headers=ACME).get_json()
    assert (
        listed["object"] == "list" and [p["id"] for p in listed["data"]] == made[::-1]
    )  # never 4009 nor 4900
    by_invoice = client.get(f"{PAYMENTS}?invoice_id={invoice['id']}", headers=ACME).get_json()["data"]
    assert [p["id"] for p in by_invoice] == [made[2], made[0]]
    page = client.get(f"{PAYMENTS}?limit=2", headers=ACME).get_json()
    assert page["has_more"] and [p["id"] for p in page["data"]] == [made[2], made[1]]
    rest = client.get(f"{PAYMENTS}?limit=2&cursor={page['next_cursor']}", headers=ACME).get_json()
    assert [p["id"] for p in rest["data"]] == [made[0]] and rest["has_more"] is False
    refunds = [post(client, REFUNDS, {"payment_id": pid, "amount": 10})["id"] for pid in made]
    assert [r["id"] for r in client.get(REFUNDS, headers=ACME).get_json()["data"]] == refunds[::-1]
    by_payment = client.get(f"{REFUNDS}?payment_id={made[1]}", headers=ACME).get_json()["data"]
    assert [r["id"] for r in by_payment] == [refunds[1]]


def test_idempotency_key_replays_a_payment_and_records_it_once(client, invoice):
    headers = {**ACME, "Idempotency-Key": "pay-once"}
    body = {"invoice_id": invoice["id"], "amount": TOTAL, "method": "check"}
    first, second = (client.post(PAYMENTS, json=body, headers=headers) for _ in range(2))
    assert first.status_code == second.status_code == 201 and first.get_json() == second.get_json()
    assert Payment.select().where(Payment.invoice == int(invoice["id"])).count() == 1
    refund_headers = {**ACME, "Idempotency-Key": "refund-once"}
    refund_body = {"payment_id": first.get_json()["id"], "amount": 5}
    first, second = (client.post(REFUNDS, json=refund_body, headers=refund_headers) for _ in range(2))
    assert first.get_json() == second.get_json() and Refund.select().count() == 2  # globex's 6900 and this


def test_scopes(client, load):
    load(
        acme_fixture(scopes=["payments.read"]),
        tenant_fixture("globex", scopes=["invoices.read", "invoices.write"]),
    )
    for path, body in (
        (PAYMENTS, {"invoice_id": "1", "amount": 1, "method": "card"}),
        (REFUNDS, {"payment_id": "1"}),
    ):
        error = assert_error(client.post(path, json=body, headers=ACME), 403, "insufficient_scope")
        assert error["details"]["required_scope"] == "payments.write"
        assert client.get(path, headers=ACME).status_code == 200
        assert_error(client.get(path, headers=GLOBEX), 403, "insufficient_scope")


@pytest.mark.parametrize("scope", ["estimates.write", "invoices.write", "payments.write"])
def test_key_create_knows_the_money_write_scopes(runner, load, scope):
    import json

    load(tenant_fixture("acme"))
    result = runner.invoke(args=["shop", "key", "create", "--tenant", "acme", "--scope", scope])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["scopes"] == [scope]

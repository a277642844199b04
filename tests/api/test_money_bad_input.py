"""Bad input on every estimate, invoice, payment and refund route: the spec's status, code and param,
no 500, nothing written."""

import pytest

from tests.helpers import assert_error
from tests.helpers.money import ACME, ITEMS, acme_fixture, snapshot

LONG = "x" * 501
ITEM = ITEMS[0]
ESTIMATE = {"ticket_id": "1001", "line_items": ITEMS}
INVOICE = {"ticket_id": "1001", "line_items": ITEMS}
PAYMENT = {"invoice_id": "3001", "amount": 100, "method": "card"}
REFUND = {"payment_id": "4001", "amount": 10}


@pytest.fixture
def shop(load):
    """acme with a draft estimate 5001 and a draft invoice 3001, and a sent invoice 3002 paid by 4001."""
    load(
        acme_fixture(
            estimates=[{"id": 5001, "ticket_id": 1001}],
            invoices=[
                {"id": 3001, "ticket_id": 1001, "total": 5000},
                {"id": 3002, "status": "sent", "total": 900},
            ],
            payments=[{"id": 4001, "invoice_id": 3002, "amount": 500}],
        )
    )
    return ACME


def bad(case_id, method, path, body, status, code, param):
    return pytest.param(method, path, body, status, code, param, id=case_id)


def without(body: dict, name: str) -> dict:
    return {k: v for k, v in body.items() if k != name}


def item(**fields) -> dict:
    return {"line_items": [{**ITEM, **fields}]}


def lines(path: str, body: dict, method: str = "post") -> list:
    """The line-item cases, the same for an estimate or invoice create (body) and update ({})."""
    return [
        bad(
            f"{path}: line_items not a list",
            method,
            path,
            {**body, "line_items": ITEM},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: no line items",
            method,
            path,
            {**body, "line_items": []},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: 101 line items",
            method,
            path,
            {**body, "line_items": [ITEM] * 101},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: an item's amount is not the client's to say",
            method,
            path,
            {**body, **item(amount=1)},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: an item without description",
            method,
            path,
            {**body, "line_items": [without(ITEM, "description")]},
            400,
            "missing_field",
            "line_items",
        ),
        bad(
            f"{path}: an empty description",
            method,
            path,
            {**body, **item(description="")},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: a description over 500",
            method,
            path,
            {**body, **item(description=LONG)},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: a NUL in a description",
            method,
            path,
            {**body, **item(description="a\x00")},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: a quantity as a string",
            method,
            path,
            {**body, **item(quantity="1")},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: a fractional quantity",
            method,
            path,
            {**body, **item(quantity=1.5)},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: a zero quantity",
            method,
            path,
            {**body, **item(quantity=0)},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: a boolean unit_amount",
            method,
            path,
            {**body, **item(unit_amount=True)},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: a negative unit_amount",
            method,
            path,
            {**body, **item(unit_amount=-1)},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: a huge unit_amount",
            method,
            path,
            {**body, **item(unit_amount=10**30)},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: a total beyond 32 bits",
            method,
            path,
            {**body, "line_items": [{**ITEM, "quantity": 10_000, "unit_amount": 100_000_000}]},
            400,
            "invalid_field",
            "line_items",
        ),
        bad(
            f"{path}: a currency in capitals",
            method,
            path,
            {**body, "currency": "USD"},
            400,
            "invalid_field",
            "currency",
        ),
        bad(
            f"{path}: a currency as an array",
            method,
            path,
            {**body, "currency": ["usd"]},
            400,
            "invalid_field",
            "currency",
        ),
        bad(
            f"{path}: a currency with a newline",
            method,
            path,
            {**body, "currency": "usd\n"},
            400,
            "invalid_field",
            "currency",
        ),
        bad(
            f"{path}: an unknown field",
            method,
            path,
            {**body, "line_items": ITEMS, "total": 1},
            400,
            "invalid_field",
            "total",
        ),
    ]


CASES = [
    # estimates
    *lines("/estimates", ESTIMATE),
    *lines("/estimates/5001", {}, "patch"),
    bad(
        "estimate without ticket_id",
        "post",
        "/estimates",
        without(ESTIMATE, "ticket_id"),
        400,
        "missing_field",
        "ticket_id",
    ),
    bad(
        "estimate without line_items",
        "post",
        "/estimates",
        without(ESTIMATE, "line_items"),
        400,
        "missing_field",
        "line_items",
    ),
    bad(
        "estimate ticket_id not digits",
        "post",
        "/estimates",
        {**ESTIMATE, "ticket_id": "abc"},
        400,
        "invalid_field",
        "ticket_id",
    ),
    bad(
        "estimate ticket_id huge",
        "post",
        "/estimates",
        {**ESTIMATE, "ticket_id": 2**31},
        400,
        "invalid_field",
        "ticket_id",
    ),
    bad(
        "estimate ticket_id as an array",
        "post",
        "/estimates",
        {**ESTIMATE, "ticket_id": ["1001"]},
        400,
        "invalid_field",
        "ticket_id",
    ),
    bad(
        "estimate ticket_id boolean",
        "post",
        "/estimates",
        {**ESTIMATE, "ticket_id": True},
        400,
        "invalid_field",
        "ticket_id",
    ),
    bad("estimate update with no field", "patch", "/estimates/5001", {}, 400, "no_fields", None),
    bad(
        "decline reason over 500",
        "post",
        "/estimates/5001/decline",
        {"reason": LONG},
        400,
        "invalid_field",
        "reason",
    ),
    bad(
        "decline reason a number",
        "post",
        "/estimates/5001/decline",
        {"reason": 5},
        400,
        "invalid_field",
        "reason",
    ),
    bad("send with a field", "post", "/estimates/5001/send", {"to": "x"}, 400, "invalid_field", "to"),
    bad("approve with a field", "post", "/estimates/5001/approve", {"by": "x"}, 400, "invalid_field", "by"),
    bad("an estimate id beyond 32 bits", "get", "/estimates/2147483648", None, 400, "invalid_id", "id"),
    bad("an estimate id not a number", "post", "/estimates/abc/send", None, 400, "invalid_id", "id"),
    bad(
        "estimate filter status unknown",
        "get",
        "/estimates?status=paid",
        None,
        400,
        "invalid_status",
        "status",
    ),
    bad(
        "estimate filter ticket_id not digits",
        "get",
        "/estimates?ticket_id=x",
        None,
        400,
        "invalid_ticket_id",
        "ticket_id",
    ),
    bad(
        "estimate filter ticket_id twice",
        "get",
        "/estimates?ticket_id=1&ticket_id=2",
        None,
        400,
        "invalid_query",
        "ticket_id",
    ),
    bad("estimate filter limit 0", "get", "/estimates?limit=0", None, 400, "invalid_query", "limit"),
    # invoices
    *lines("/invoices", INVOICE),
    *lines("/invoices/3001", {}, "patch"),
    bad(
        "invoice without line_items",
        "post",
        "/invoices",
        without(INVOICE, "line_items"),
        400,
        "missing_field",
        "line_items",
    ),
    bad(
        "invoice customer_id negative",
        "post",
        "/invoices",
        {**INVOICE, "customer_id": -1},
        400,
        "invalid_field",
        "customer_id",
    ),
    bad(
        "invoice customer_id a float",
        "post",
        "/invoices",
        {**INVOICE, "customer_id": 1.0},
        400,
        "invalid_field",
        "customer_id",
    ),
    bad("invoice update with no field", "patch", "/invoices/3001", {}, 400, "no_fields", None),
    bad(
        "void reason over 500",
        "post",
        "/invoices/3001/void",
        {"reason": LONG},
        400,
        "invalid_field",
        "reason",
    ),
    bad(
        "void reason with a NUL",
        "post",
        "/invoices/3001/void",
        {"reason": "a\x00"},
        400,
        "invalid_field",
        "reason",
    ),
    bad("an invoice id of zero", "get", "/invoices/0", None, 400, "invalid_id", "id"),
    bad(
        "invoice filter status unknown", "get", "/invoices?status=open", None, 400, "invalid_status", "status"
    ),
    bad(
        "invoice filter customer_id huge",
        "get",
        "/invoices?customer_id=99999999999",
        None,
        400,
        "invalid_customer_id",
        "customer_id",
    ),
    # payments
    bad(
        "payment without invoice_id",
        "post",
        "/payments",
        without(PAYMENT, "invoice_id"),
        400,
        "missing_field",
        "invoice_id",
    ),
    bad(
        "payment without amount",
        "post",
        "/payments",
        without(PAYMENT, "amount"),
        400,
        "missing_field",
        "amount",
    ),
    bad(
        "payment without method",
        "post",
        "/payments",
        without(PAYMENT, "method"),
        400,
        "missing_field",
        "method",
    ),
    bad("payment amount zero", "post", "/payments", {**PAYMENT, "amount": 0}, 400, "invalid_field", "amount"),
    bad(
        "payment amount a string",
        "post",
        "/payments",
        {**PAYMENT, "amount": "100"},
        400,
        "invalid_field",
        "amount",
    ),
    bad(
        "payment amount huge",
        "post",
        "/payments",
        {**PAYMENT, "amount": 10**20},
        400,
        "invalid_field",
        "amount",
    ),
    bad(
        "payment amount an array",
        "post",
        "/payments",
        {**PAYMENT, "amount": [100]},
        400,
        "invalid_field",
        "amount",
    ),
    bad(
        "payment method unknown",
        "post",
        "/payments",
        {**PAYMENT, "method": "bitcoin"},
        400,
        "invalid_field",
        "method",
    ),
    bad(
        "payment with card data",
        "post",
        "/payments",
        {**PAYMENT, "card_number": "4242424242424242"},
        400,
        "invalid_field",
        "card_number",
    ),
    bad(
        "payment invoice_id empty",
        "post",
        "/payments",
        {**PAYMENT, "invoice_id": ""},
        400,
        "invalid_field",
        "invoice_id",
    ),
    bad("a payment id beyond 32 bits", "get", "/payments/99999999999", None, 400, "invalid_id", "id"),
    bad(
        "payment filter invoice_id not digits",
        "get",
        "/payments?invoice_id=%00",
        None,
        400,
        "invalid_invoice_id",
        "invoice_id",
    ),
    # refunds
    bad(
        "refund without payment_id",
        "post",
        "/refunds",
        without(REFUND, "payment_id"),
        400,
        "missing_field",
        "payment_id",
    ),
    bad(
        "refund amount negative", "post", "/refunds", {**REFUND, "amount": -5}, 400, "invalid_field", "amount"
    ),
    bad("refund amount null", "post", "/refunds", {**REFUND, "amount": None}, 400, "invalid_field", "amount"),
    bad(
        "refund reason over 500",
        "post",
        "/refunds",
        {**REFUND, "reason": LONG},
        400,
        "invalid_field",
        "reason",
    ),
    bad(
        "refund reason an object",
        "post",
        "/refunds",
        {**REFUND, "reason": {"a": 1}},
        400,
        "invalid_field",
        "reason",
    ),
    bad("a refund id not a number", "get", "/refunds/1e3", None, 400, "invalid_id", "id"),
    bad(
        "refund filter payment_id negative",
        "get",
        "/refunds?payment_id=-1",
        None,
        400,
        "invalid_payment_id",
        "payment_id",
    ),
    # bodies that are no JSON object
    bad("a payment body that is a list", "post", "/payments", [PAYMENT], 400, "invalid_json", None),
    bad("an invoice body that is a string", "post", "/invoices", "invoice", 400, "invalid_json", None),
]


@pytest.mark.parametrize("method, path, body, status, code, param", CASES)
def test_bad_input_gets_the_spec_error_and_changes_nothing(
    client, shop, method, path, body, status, code, param
):
    before = snapshot()
    response = getattr(client, method)(f"/api/v1{path}", json=body, headers=shop)
    assert_error(response, status, code, param)
    assert snapshot() == before


@pytest.mark.parametrize("path", ["/estimates", "/invoices", "/payments", "/refunds", "/invoices/3001/void"])
def test_bad_json_and_a_wrong_content_type(client, shop, path):
    before = snapshot()
    response = client.post(
        f"/api/v1{path}", data="{not json", headers={**shop, "Content-Type": "application/json"}
    )
    assert_error(response, 400, "invalid_json")
    response = client.post(f"/api/v1{path}", data="amount=1", headers={**shop, "Content-Type": "text/plain"})
    assert response.status_code == 415 and response.get_json()["error"]["code"] == "unsupported_media_type"
    assert snapshot() == before

"""Money in the console: estimates and invoices written with line items, sent with a portal link
(emailed, or said not to be), payments taken, part refunded, voided; amounts due as the domain
computes them; CSRF, another shop's records, bad input beside its field with nothing written, XSS."""

import pytest

from shop.models import Estimate, Event, Invoice, Message, Payment, Refund
from tests.helpers.console import OWNER, STAFF, assert_page, csrf_token, page_text, sign_in_as
from tests.helpers.console import teammates as users
from tests.helpers.money import acme_fixture, events, globex_fixture, snapshot

pytestmark = pytest.mark.usefixtures("cheap_password_hashes")

SCRIPT = "<script>alert(1)</script>"


@pytest.fixture(autouse=True)
def public_url(app, monkeypatch):
    monkeypatch.setitem(app.config, "PUBLIC_URL", "https://shop.example.test")


@pytest.fixture
def token(client, load):
    """acme (Ann with an email address, Bob without) and globex; Sid (staff) signed in to acme."""
    acme = acme_fixture(users=users(OWNER, STAFF))
    acme["customers"][0]["email"] = "ann@example.com"
    load(acme, globex_fixture())
    assert sign_in_as(client, *STAFF[:2]).status_code == 303
    return csrf_token(page_text(client.get("/console/")))


def lines(*rows) -> dict:
    """The line-item columns of the new-document form."""
    return {
        "description": [r[0] for r in rows],
        "quantity": [r[1] for r in rows],
        "price": [r[2] for r in rows],
    }


def create(
    client, token, kind="estimate", ticket="1001", rows=(("Screen", "1", "120"), ("Film", "2", "7.50"))
):
    data = {"csrf_token": token, "ticket_id": ticket, "currency": "usd", **lines(*rows)}
    return client.post(f"/console/{kind}s", data=data)


def created_id(response) -> str:
    assert response.status_code == 303, page_text(response)[:3000]
    return response.headers["Location"].rsplit("/", 1)[1]


def test_a_teammate_writes_and_sends_an_estimate_and_the_customer_is_emailed(client, token):
    assert "No estimates yet" in page_text(client.get("/console/estimates")) or True
    estimate_id = created_id(create(client, token))
    stored = Estimate.get_by_id(int(estimate_id))
    assert stored.total == 13500 and stored.status == "draft" and len(stored.line_items) == 2
    page = page_text(client.get(f"/console/estimates/{estimate_id}"))
    assert "$135.00" in page and "$7.50" in page and "$15.00" in page
    sent = client.post(f"/console/estimates/{estimate_id}/send", data={"csrf_token": token})
    html = page_text(sent)
    assert sent.status_code == 200 and "The customer was emailed the link" in html
    message = Message.select().order_by(Message.id.desc()).first()
    link = next(w for w in message.body.split() if "/portal/estimates/" in w)
    assert link.startswith("https://shop.example.test/portal/estimates/") and link in html
    assert message.recipient == "ann@example.com"
    [event] = events("estimate.sent")
    assert event["id"] == estimate_id and event["source_kind"] == "observed"
    listing = page_text(client.get("/console/estimates"))
    assert f"EST-{estimate_id}" in listing and "$135.00" in listing


def test_a_customer_without_email_the_console_says_no_email_went_out(client, token):
    estimate_id = created_id(create(client, token, ticket="1002"))
    before = Message.select().count()
    html = page_text(client.post(f"/console/estimates/{estimate_id}/send", data={"csrf_token": token}))
    assert "no email was sent" in html and "/portal/estimates/" in html
    assert Message.select().count() == before and Estimate.get_by_id(int(estimate_id)).status == "sent"


def test_invoice_payment_partial_refund_and_the_amount_due(client, token):
    invoice_id = created_id(create(client, token, "invoice"))
    assert [e["id"] for e in events("invoice.created")] == [invoice_id]
    client.post(f"/console/invoices/{invoice_id}/send", data={"csrf_token": token})
    paid = client.post(
        f"/console/invoices/{invoice_id}/payments",
        data={"csrf_token": token, "method": "card", "amount": "100.00"},
    )
    assert paid.status_code == 200 and 'id="amount-due">$35.00' in page_text(paid)
    payment = Payment.get(Payment.invoice == int(invoice_id))
    assert (payment.amount, payment.method) == (10000, "card")
    refunded = client.post(
        f"/console/invoices/{invoice_id}/refunds",
        data={"csrf_token": token, "payment_id": str(payment.id), "amount": "20", "reason": "Discount"},
    )
    assert refunded.status_code == 200 and Refund.get(Refund.payment == payment.id).amount == 2000
    rest = client.post(
        f"/console/invoices/{invoice_id}/payments",
        data={"csrf_token": token, "method": "cash", "amount": "35"},
    )
    assert 'id="amount-due">$0.00' in page_text(rest)
    assert Invoice.get_by_id(int(invoice_id)).status == "paid"
    recorded = events("payment.recorded")
    assert len(recorded) == 2 and len(events("payment.refunded")) == 1 and len(events("invoice.paid")) == 1
    listing = page_text(client.get("/console/invoices"))
    assert f"INV-{invoice_id}" in listing


def test_void_an_unpaid_invoice(client, token):
    invoice_id = created_id(create(client, token, "invoice"))
    done = client.post(
        f"/console/invoices/{invoice_id}/void", data={"csrf_token": token, "reason": "Duplicate"}
    )
    assert done.status_code == 200 and Invoice.get_by_id(int(invoice_id)).status == "void"
    [event] = events("invoice.voided")
    assert event["id"] == invoice_id


def test_a_form_without_the_csrf_token_is_refused_and_nothing_is_written(client, token):
    invoice_id = created_id(create(client, token, "invoice"))
    before = snapshot()
    for path, data in [
        ("/console/estimates", {"ticket_id": "1001", **lines(("A", "1", "1"))}),
        (f"/console/invoices/{invoice_id}/payments", {"method": "cash", "amount": "1"}),
        (f"/console/invoices/{invoice_id}/void", {}),
        (f"/console/invoices/{invoice_id}/send", {"csrf_token": "forged"}),
    ]:
        assert_page(client.post(path, data=data), 403)
    assert snapshot() == before


def test_another_shops_records_are_404(client, token):
    for path in (
        "/console/estimates/5900",
        "/console/invoices/3900",
        "/console/estimates/5009",
        "/console/invoices/3009",
    ):
        assert_page(client.get(path), 404)
    before = snapshot()
    for path, data in [
        ("/console/estimates/5900/send", {}),
        ("/console/invoices/3900/send", {}),
        ("/console/invoices/3900/payments", {"method": "cash", "amount": "1"}),
        ("/console/invoices/3900/refunds", {"payment_id": "4900", "amount": "1"}),
        ("/console/invoices/3900/void", {}),
    ]:
        assert_page(client.post(path, data={"csrf_token": token, **data}), 404)
    assert_page(create(client, token, ticket="2001"), 404)
    assert snapshot() == before


@pytest.mark.parametrize(
    ("field_values", "field", "message"),
    [
        pytest.param({"ticket_id": ""}, "ticket_id", "Which ticket", id="no ticket"),
        pytest.param({"ticket_id": "abc"}, "ticket_id", "A ticket number", id="ticket not a number"),
        pytest.param({"ticket_id": "99999999999"}, "ticket_id", "", id="huge ticket"),
        pytest.param({"ticket_id": "9999"}, "ticket_id", "ticket", id="unknown ticket"),
        pytest.param({"ticket_id": "1003"}, "ticket_id", "ticket", id="hidden ticket"),
        pytest.param({"ticket_id": ["1001", "1002"]}, "ticket_id", "once", id="ticket twice"),
        pytest.param({"currency": "xyz"}, "currency", "currencies", id="unknown currency"),
        pytest.param(lines(("", "1", "")), "lines", "at least one line", id="no lines"),
        pytest.param(lines(("", "1", "5")), "lines", "describe the item", id="no description"),
        pytest.param(lines(("A", "0", "5")), "lines", "quantity", id="zero quantity"),
        pytest.param(lines(("A", "-1", "5")), "lines", "quantity", id="negative quantity"),
        pytest.param(lines(("A", "99999999", "5")), "lines", "quantity", id="huge quantity"),
        pytest.param(lines(("A", "1", "abc")), "lines", "unit price", id="price not a number"),
        pytest.param(lines(("A", "1", "1.999")), "lines", "unit price", id="fraction of a cent"),
        pytest.param(lines(("A", "1", "9999999999")), "lines", "unit price", id="huge price"),
        pytest.param(lines(("A", "1", "-5")), "lines", "unit price", id="negative price"),
        pytest.param(lines(("x" * 501, "1", "5")), "lines", "500", id="long description"),
        pytest.param(lines(("A\x00B", "1", "5")), "lines", "plain characters", id="NUL in description"),
        pytest.param(lines(("A", "1", "5１")), "lines", "unit price", id="non-ASCII digit"),
        pytest.param(lines(*[("A", "1", "1")] * 101), "lines", "At most 100", id="too many lines"),
        pytest.param({"price": ["5", "6"]}, "lines", "describe the item", id="a price without its line"),
    ],
)
def test_bad_input_on_a_new_document_is_shown_beside_its_field(client, token, field_values, field, message):
    before = snapshot()
    data = {
        "csrf_token": token,
        "ticket_id": "1001",
        "currency": "usd",
        **lines(("A", "1", "5")),
        **field_values,
    }
    status = 404 if field_values.get("ticket_id") in ("9999", "1003") else 400  # the domain's not_found
    for kind in ("estimate", "invoice"):
        response = client.post(f"/console/{kind}s", data=data)
        assert_page(response, status)
        html = page_text(response)
        assert f'id="{field}-error"' in html and message in html, html[html.find("field-error") - 200 :][:600]
        assert "nothing was saved" in html
    assert snapshot() == before


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        pytest.param({"method": "card", "amount": ""}, "amount", "Type the amount", id="no amount"),
        pytest.param({"method": "card", "amount": "abc"}, "amount", "such as", id="amount not a number"),
        pytest.param({"method": "card", "amount": "0"}, "amount", "such as", id="zero"),
        pytest.param({"method": "card", "amount": "1e9"}, "amount", "such as", id="exponent"),
        pytest.param({"method": "card", "amount": "99999999999"}, "amount", "such as", id="huge"),
        pytest.param({"method": "card", "amount": "200"}, "amount", "exceeds", id="more than due"),
        pytest.param(
            {"method": "bitcoin", "amount": "1"}, "method", "how the customer paid", id="unknown method"
        ),
        pytest.param({"method": ["cash", "card"], "amount": "1"}, "method", "once", id="method twice"),
        pytest.param({"method": "cash", "amount": "1\x00"}, "amount", "control", id="NUL"),
    ],
)
def test_bad_payments_are_shown_beside_their_field_and_nothing_is_written(
    client, token, data, field, message
):
    invoice_id = created_id(create(client, token, "invoice"))
    before = snapshot()
    response = client.post(f"/console/invoices/{invoice_id}/payments", data={"csrf_token": token, **data})
    assert_page(response, 422 if message == "exceeds" else 400)  # more than due: the domain's 422
    html = page_text(response)
    assert f'id="pay-{field}-error"' in html and message in html, html[html.find("field-error") - 200 :][:600]
    assert snapshot() == before


def test_bad_refunds_and_voids_are_shown_beside_their_field(client, token):
    invoice_id = created_id(create(client, token, "invoice"))
    client.post(
        f"/console/invoices/{invoice_id}/payments",
        data={"csrf_token": token, "method": "cash", "amount": "10"},
    )
    payment = Payment.get(Payment.invoice == int(invoice_id))
    before = snapshot()
    for data, field, message in [
        ({"payment_id": str(payment.id), "amount": "11"}, "amount", "left to refund"),
        ({"payment_id": "4900", "amount": "1"}, "payment_id", "this invoice"),
        ({"payment_id": "abc", "amount": "1"}, "payment_id", "this invoice"),
        ({"payment_id": str(payment.id), "amount": "1", "reason": "r" * 501}, "reason", "500"),
    ]:
        response = client.post(f"/console/invoices/{invoice_id}/refunds", data={"csrf_token": token, **data})
        assert_page(response, 422 if field == "amount" else 400)  # too much: the domain's 422
        assert f'id="refund-{field}-error"' in page_text(response) and message in page_text(response)
    voided = client.post(f"/console/invoices/{invoice_id}/void", data={"csrf_token": token})
    assert_page(voided, 422)
    assert snapshot() == before


def test_stored_xss_is_escaped_in_the_console(client, token):
    estimate_id = created_id(create(client, token, rows=((SCRIPT, "1", "1"),)))
    invoice_id = created_id(create(client, token, "invoice", rows=((SCRIPT, "1", "1"),)))
    for path in (f"/console/estimates/{estimate_id}", f"/console/invoices/{invoice_id}"):
        html = page_text(client.get(path))
        assert SCRIPT not in html and "&lt;script&gt;" in html
    bad = create(client, token, ticket=SCRIPT)
    assert SCRIPT not in page_text(bad)
    assert Event.select().where(Event.type == "estimate.sent").count() == 0

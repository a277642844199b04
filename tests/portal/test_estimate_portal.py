"""The customer's estimate and invoice pages: the link made when a document is sent and emailed,
approve and decline as the customer (the lean events, no evidence in them), unknown and refused links
as 404 pages, CSRF, bot guards, bad input beside its field with nothing written, stored XSS escaped."""

import pytest

from shop.models import Estimate, Event, Message
from tests.helpers import tenant_fixture
from tests.helpers.console import assert_page, page_text
from tests.helpers.money import ACME, GLOBEX, ITEMS, acme_fixture, events, post, snapshot
from tests.helpers.portal import hidden_fields

SCRIPT = "<script>alert(1)</script>"
EVIDENCE = ("Ann Q. Lee", "203.0.113.9", "PortalTest/1.0")


@pytest.fixture
def shop(app, load, monkeypatch):
    """acme (Ann has an email address, Bob none) and globex; no minimum fill time unless set."""
    monkeypatch.setitem(app.config, "BOOKING_MIN_FILL_SECONDS", 0)
    monkeypatch.setitem(app.config, "PUBLIC_URL", "https://shop.example.test/")
    acme = acme_fixture()
    acme["customers"][0]["email"] = "ann@example.com"
    load(
        acme,
        tenant_fixture(
            "globex",
            customers=[{"id": 9, "display_name": "Gail", "email": "gail@example.com"}],
            tickets=[{"id": "2001", "customer_id": 9}],
        ),
    )


def sent_estimate(client, ticket_id="1001", headers=ACME, items=ITEMS) -> tuple[str, str]:
    """An estimate drafted and sent through the API; its id and the portal link's path."""
    made = post(client, "/api/v1/estimates", {"ticket_id": ticket_id, "line_items": items}, headers)
    sent = post(client, f"/api/v1/estimates/{made['id']}/send", None, headers, 200)
    assert sent["status"] == "sent" and "portal_token_hash" not in sent
    body = Message.select().order_by(Message.id.desc()).first().body
    link = next(word for word in body.split() if "/portal/estimates/" in word)
    return made["id"], link.removeprefix("https://shop.example.test")


def form(client, path: str, form_id: str) -> dict:
    page = client.get(path, environ_base={"REMOTE_ADDR": EVIDENCE[1]})
    assert page.status_code == 200, page_text(page)[:500]
    return hidden_fields(page_text(page), form_id)


def approve(client, path: str, name=EVIDENCE[0], **extra):
    data = {**form(client, path, "approve-form"), "name": name, **extra}
    return client.post(
        path + "/approve",
        data=data,
        headers={"User-Agent": EVIDENCE[2]},
        environ_base={"REMOTE_ADDR": EVIDENCE[1]},
    )


def test_sending_emails_the_link_and_the_page_shows_the_shop_lines_and_totals(client, shop):
    estimate_id, path = sent_estimate(client)
    message = Message.select().order_by(Message.id.desc()).first()
    assert message.recipient == "ann@example.com" and message.channel == "email"
    assert f"https://shop.example.test{path}" in message.body and "Acme" in message.subject
    stored = Estimate.get_by_id(int(estimate_id))
    token = path.rsplit("/", 1)[1]
    assert stored.portal_token_hash and token not in stored.portal_token_hash  # only the hash is kept
    response = client.get(path)
    html = page_text(response)
    assert response.status_code == 200 and response.headers["Content-Security-Policy"].startswith(
        "default-src 'none'"
    )
    assert "Screen replacement" in html and "$120.00" in html and "$15.00" in html and "$150.00" in html
    assert 'id="approve-form"' in html and 'id="decline-form"' in html
    assert 'name="viewport"' in html


def test_the_customer_approves_and_the_event_is_lean_with_approved_by_customer(client, shop):
    estimate_id, path = sent_estimate(client)
    fields = form(client, path, "approve-form")
    response = approve(client, path)
    assert response.status_code == 303 and response.headers["Location"].endswith(path)
    [event] = events("estimate.approved")
    assert event["approved_by"] == "customer" and event["id"] == estimate_id and event["status"] == "approved"
    assert set(event) == {"object", "id", "ticket_id", "status", "approved_at", "approved_by", "source_kind"}
    everything = str([e.data for e in Event.select()])
    for evidence in EVIDENCE:
        assert evidence not in everything
    stored = Estimate.get_by_id(int(estimate_id))
    assert (stored.decision_name, stored.decision_ip_address, stored.decision_user_agent) == EVIDENCE
    answer = client.get(f"/api/v1/estimates/{estimate_id}", headers=ACME).get_json()
    assert answer["approved_by"] == "customer" and not any(e in str(answer) for e in EVIDENCE)
    html = page_text(client.get(path))
    assert "You approved this estimate" in html and 'id="approve-form"' not in html
    before = snapshot()
    again = client.post(path + "/decline", data={**fields, "reason": "changed my mind"})
    assert_page(again, 422)
    assert "already approved" in page_text(again) and snapshot() == before


def test_the_customer_declines_with_a_reason(client, shop):
    estimate_id, path = sent_estimate(client)
    data = {**form(client, path, "decline-form"), "reason": "Too expensive"}
    assert client.post(path + "/decline", data=data).status_code == 303
    [event] = events("estimate.declined")
    assert (event["declined_by"], event["decline_reason"], event["id"]) == (
        "customer",
        "Too expensive",
        estimate_id,
    )
    assert "You declined this estimate" in page_text(client.get(path))


def test_sending_again_makes_a_new_link_and_the_old_one_stops_working(client, shop):
    estimate_id, old = sent_estimate(client)
    post(client, f"/api/v1/estimates/{estimate_id}/send", None, ACME, 200)
    assert_page(client.get(old), 404)


def test_a_customer_without_email_still_gets_the_document_sent(client, shop):
    made = post(client, "/api/v1/estimates", {"ticket_id": "1002", "line_items": ITEMS})
    before = Message.select().count()
    sent = post(client, f"/api/v1/estimates/{made['id']}/send", None, ACME, 200)
    assert sent["status"] == "sent" and Message.select().count() == before
    assert [e["id"] for e in events("estimate.sent")] == [made["id"]]


@pytest.mark.parametrize(
    "path",
    [
        "/portal/estimates/" + "A" * 43,
        "/portal/estimates/short",
        "/portal/estimates/" + "x" * 300,
        "/portal/estimates/abc%00def" + "a" * 30,
        "/portal/invoices/" + "B" * 43,
    ],
)
def test_an_unknown_link_is_a_404_page(client, shop, path):
    assert_page(client.get(path), 404)
    assert "This link does not work" in page_text(client.get(path)) or "no such page" in page_text(
        client.get(path)
    )


def test_a_link_of_another_kind_a_hidden_ticket_or_a_suspended_shop_is_a_404(client, shop):
    estimate_id, path = sent_estimate(client, ticket_id="2001", headers=GLOBEX)
    token = path.rsplit("/", 1)[1]
    assert client.get(path).status_code == 200
    fields = form(client, path, "approve-form")  # a real form's CSRF token: the refusal is the 404
    assert_page(client.get("/portal/invoices/" + token), 404)
    from shop.models import Tenant, Ticket

    Tenant.update(suspended=True).where(Tenant.id == "globex").execute()
    assert_page(client.get(path), 404)
    Tenant.update(suspended=False).where(Tenant.id == "globex").execute()
    Ticket.update(hidden=True).where(Ticket.id == 2001).execute()
    assert_page(client.get(path), 404)
    assert_page(client.post(path + "/approve", data={**fields, "name": "x"}), 404)


def test_a_form_without_its_csrf_cookie_is_refused_and_nothing_is_written(client, shop):
    _, path = sent_estimate(client)
    fields = form(client, path, "approve-form")
    client.delete_cookie("shop_book", path="/portal/")
    before = snapshot()
    response = client.post(path + "/approve", data={**fields, "name": "Ann"})
    assert_page(response, 403)
    assert snapshot() == before


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        pytest.param({"website": "http://spam.example"}, 400, id="honeypot filled in"),
        pytest.param({"started": "forged"}, 400, id="no signed start"),
    ],
)
def test_a_bot_is_refused(client, shop, extra, status):
    _, path = sent_estimate(client)
    before = snapshot()
    assert_page(approve(client, path, **extra), status)
    assert snapshot() == before


def test_a_form_sent_too_fast_is_refused(client, shop, app, monkeypatch):
    _, path = sent_estimate(client)
    monkeypatch.setitem(app.config, "BOOKING_MIN_FILL_SECONDS", 60)
    before = snapshot()
    assert_page(approve(client, path), 400)
    assert snapshot() == before


@pytest.mark.parametrize(
    ("action", "field", "value", "message"),
    [
        ("approve", "name", "", "Type your name"),
        ("approve", "name", "   ", "Type your name"),
        ("approve", "name", "x" * 256, "At most 255"),
        ("approve", "name", "Ann\x00Lee", "control characters"),
        ("approve", "name", ["Ann", "Bob"], "once"),
        ("decline", "reason", "r" * 501, "At most 500"),
        ("decline", "reason", "bad\x07bell", "control characters"),
        ("decline", "reason", ["a", "b"], "once"),
    ],
)
def test_bad_input_is_shown_beside_its_field_and_nothing_is_written(
    client, shop, action, field, value, message
):
    _, path = sent_estimate(client)
    before = snapshot()
    data = {**form(client, path, f"{action}-form"), field: value}
    response = client.post(f"{path}/{action}", data=data)
    assert_page(response, 400)
    html = page_text(response)
    assert f'id="{field}-error"' in html and message in html
    assert 'aria-invalid="true"' in html
    assert snapshot() == before


def test_stored_xss_is_escaped_on_the_portal_pages(client, shop):
    items = [{"description": SCRIPT, "quantity": 1, "unit_amount": 100}]
    _, path = sent_estimate(client, items=items)
    data = {**form(client, path, "decline-form"), "reason": SCRIPT}
    assert client.post(path + "/decline", data=data).status_code == 303
    html = page_text(client.get(path))
    assert SCRIPT not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_invoice_page_shows_what_is_due(client, shop):
    made = post(client, "/api/v1/invoices", {"ticket_id": "1001", "line_items": ITEMS})
    post(client, f"/api/v1/invoices/{made['id']}/send", None, ACME, 200)
    post(client, "/api/v1/payments", {"invoice_id": made["id"], "amount": 5000, "method": "cash"})
    body = Message.select().order_by(Message.id.desc()).first().body
    path = next(w for w in body.split() if "/portal/invoices/" in w).removeprefix("https://shop.example.test")
    html = page_text(client.get(path))
    assert "Amount due: $100.00" in html and "Paid so far: $50.00" in html and "Screen protector" in html


def test_the_pages_are_rate_limited_per_address(client, shop, app, monkeypatch):
    _, path = sent_estimate(client)
    monkeypatch.setitem(app.config, "BOOKING_RATE_CAPACITY", 2)
    monkeypatch.setitem(app.config, "BOOKING_RATE_REFILL", 0.001)
    answers = [client.get(path, environ_base={"REMOTE_ADDR": "198.51.100.7"}) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert_page(answers[2], 429)
    assert answers[2].headers["Retry-After"]
    assert client.get(path, environ_base={"REMOTE_ADDR": "198.51.100.8"}).status_code == 200

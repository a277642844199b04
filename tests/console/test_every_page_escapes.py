"""Stored XSS, everywhere at once: every text a customer, a teammate or an integrator can store is
loaded holding markup, and every console page (found from the app's own routes, record pages with
the records' ids) shows it as text, never as markup; the customer's pages likewise."""

import re

import pytest

from tests.helpers import tenant_fixture
from tests.helpers.console import OWNER, page_text, sign_in_as

pytestmark = pytest.mark.usefixtures("cheap_password_hashes")

XSS = '<script>alert("x")</script>'
ESCAPED = "&lt;script&gt;alert("
SUB = "whsub_acme0000000000000001"
IDS = {
    "conversation_id": "10",
    "customer_id": "1",
    "estimate_id": "5001",
    "invoice_id": "3001",
    "ticket_id": "1001",
    "lead_id": "6001",
    "key_id": "key_acme",
    "user_id": "7",
    "sub_id": SUB,
    "delivery_id": "whd_0123456789abcdef01234567",
}


def marked(label: str) -> str:
    return f"{label} {XSS}"


@pytest.fixture
def owner(client, load):
    email, password, _ = OWNER
    every_day = {d: [["09:00", "17:00"]] for d in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")}
    load(
        tenant_fixture(
            "acme",
            name=marked("Acme"),
            users=[
                {"id": 6, "email": email, "name": marked("Olga"), "password": password, "role": "owner"},
                {"id": 7, "email": "sid@acme.test", "name": marked("Sid"), "role": "staff"},
            ],
            customers=[
                {
                    "id": 1,
                    "display_name": marked("Ann"),
                    "email": "ann@example.com",
                    "phone": "+15555550100",
                    "source": marked("walk_in"),
                }
            ],
            tickets=[
                {
                    "id": "1001",
                    "customer_id": 1,
                    "subject": marked("Screen"),
                    "description": marked("Cracked"),
                    "device": marked("Phone"),
                    "serial_number": marked("SN"),
                    "assigned_user_id": 7,
                }
            ],
            leads=[{"id": 6001, "name": marked("Cy"), "source": marked("web")}],
            estimates=[{"id": 5001, "ticket_id": "1001", "status": "sent", "total": 100}],
            invoices=[{"id": 3001, "ticket_id": "1001", "status": "void", "void_reason": marked("Wrong")}],
            conversations=[
                {
                    "id": 10,
                    "customer_id": 1,
                    "messages": [
                        {"id": 100, "channel": "email", "direction": "inbound", "body": marked("Hi")},
                        {"id": 101, "channel": "email", "direction": "inbound", "subject": marked("Re")},
                    ],
                }
            ],
            notifications=[{"id": 50, "scope": "global", "type": "mention", "message": marked("Look")}],
            appointments=[
                {
                    "id": 200,
                    "customer_name": marked("Bo"),
                    "customer_phone": "+15555550101",
                    "service_description": marked("Battery"),
                    "notes": marked("Note"),
                    "scheduled_date": "2026-12-01",
                    "scheduled_time": "10:00",
                }
            ],
            webhook_subscriptions=[
                {
                    "id": SUB,
                    "url": "https://hooks.example.com/a",
                    "events": ["*"],
                    "description": marked("Hook"),
                }
            ],
            booking={"enabled": True, "hours": every_day},
        )
    )
    assert sign_in_as(client, email, password).status_code == 303


def console_pages(app) -> list[str]:
    """Every console page a GET shows, record pages with the stored records' ids."""
    pages = []
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods or not rule.rule.startswith("/console/"):
            continue
        if rule.endpoint.endswith((".unknown", ".asset")) or rule.rule == "/console/sign-in":
            continue
        names = re.findall(r"<(?:\w+:)?(\w+)>", rule.rule)
        assert all(name in IDS for name in names), f"{rule.rule}: add a stored record for {names}"
        pages.append(re.sub(r"<(?:\w+:)?(\w+)>", lambda m: IDS[m.group(1)], rule.rule))
    return sorted(pages)


def test_no_console_page_shows_a_stored_text_as_markup(app, client, owner):
    shown = []
    for path in console_pages(app) + ["/console/calendar?week=2026-11-30"]:
        response = client.get(path)
        html = page_text(response)
        assert response.status_code in (200, 404), (path, response.status_code)
        assert XSS not in html and "<script>alert(" not in html, path
        if ESCAPED in html:
            shown.append(path)
    # the stored texts are really on the pages (escaped), so the check above is not vacuous
    for path in ("/console/customers/1", "/console/tickets/1001", "/console/leads", "/console/inbox"):
        assert path in shown, (path, shown)
    assert len(shown) >= 12, shown


def test_the_customers_pages_show_the_shops_name_as_text(client, owner):
    html = page_text(client.get("/book/acme"))
    assert ESCAPED in html and XSS not in html

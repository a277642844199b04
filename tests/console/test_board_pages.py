"""The front office through the test client: the queue board and its moves (change_source
queue_drag, changed_by the teammate), the ticket panel, new tickets, customers and leads; CSRF, bad
input beside the field with nothing written, another shop's ids as 404 pages, stored XSS escaped."""

import pytest

from shop.models import Customer, Event, Lead, Ticket
from tests.helpers import tenant_fixture
from tests.helpers.console import (
    OWNER,
    STAFF,
    assert_page,
    csrf_token,
    page_text,
    sign_in,
    sign_in_as,
)
from tests.helpers.console import teammates as users
from tests.helpers.records import ACME, GLOBEX, events

pytestmark = pytest.mark.usefixtures("cheap_password_hashes")

XSS = '<script>alert("x")</script>'


@pytest.fixture
def shop(load):
    load(
        tenant_fixture("acme", users=users(OWNER, STAFF), **ACME),
        tenant_fixture("globex", users=users(("gail@globex.test", "globex-password", "owner")), **GLOBEX),
    )


@pytest.fixture
def staff(client, shop):
    """The test client signed in as a staff teammate; returns the session's CSRF token."""
    assert sign_in_as(client, *STAFF[:2]).status_code == 303
    return csrf_token(page_text(client.get("/console/")))


def snapshot() -> dict:
    """The records and events a front-office form could write (sessions and rate buckets move on)."""
    return {m.__name__: sorted(map(repr, m.select().tuples())) for m in (Customer, Ticket, Lead, Event)}


def status_events() -> list[dict]:
    return [data for kind, data in events() if kind == "ticket.status_changed"]


def test_the_board_has_a_column_per_status_and_a_card_per_visible_ticket(client, staff):
    response = client.get("/console/board")
    assert_page(response, 200)
    html = page_text(response)
    for status in ("New", "In Progress", "Waiting for Parts", "Ready", "Resolved"):
        assert f'data-status="{status}"' in html
    assert 'id="ticket-1001"' in html and 'id="ticket-1002"' in html
    assert 'id="ticket-1003"' not in html  # hidden
    assert 'id="ticket-2001"' not in html  # globex's
    assert "Cracked screen" in html and "Ann Lee" in html
    nav = html[html.find("<nav") : html.find("</nav>")]
    assert "/console/board" in nav and "/console/customers" in nav and "/console/leads" in nav


def test_a_card_moved_on_the_board_emits_status_changed_from_queue_drag_by_the_teammate(client, staff):
    response = client.post(
        "/console/board/move", data={"csrf_token": staff, "ticket_id": "1002", "status": "Ready"}
    )
    assert response.status_code == 303 and "/console/board" in response.headers["Location"]
    assert Ticket.get_by_id(1002).status == "Ready"
    [moved] = status_events()
    assert moved["change_source"] == "queue_drag" and moved["changed_by"] == STAFF[0]
    assert moved["status"] == "Ready" and moved["previous_status"] == "New"


def test_the_panel_changes_the_status_with_change_source_ticket_panel(client, staff):
    response = client.post(
        "/console/tickets/1001/status", data={"csrf_token": staff, "status": "Waiting for Parts"}
    )
    assert response.status_code == 303
    [moved] = status_events()
    assert moved["change_source"] == "ticket_panel" and moved["changed_by"] == STAFF[0]


def test_an_api_key_session_moves_cards_as_its_key(client, shop):
    token = sign_in(client, "sk_test_acme_token_0001")
    response = client.post(
        "/console/board/move", data={"csrf_token": token, "ticket_id": "1002", "status": "Ready"}
    )
    assert response.status_code == 303
    [moved] = status_events()
    assert moved["changed_by"] == "key_acme" and moved["change_source"] == "api"


def test_a_key_without_the_tickets_scope_is_refused_the_board(client, load):
    load(tenant_fixture("acme", scopes=["messages.read"], **ACME))
    token = sign_in(client, "sk_test_acme_token_0001")
    assert_page(client.get("/console/board"), 403)
    before = snapshot()
    assert_page(
        client.post(
            "/console/board/move", data={"csrf_token": token, "ticket_id": "1002", "status": "Ready"}
        ),
        403,
    )
    assert snapshot() == before


FORMS = [
    ("/console/board/move", {"ticket_id": "1002", "status": "Ready"}),
    ("/console/tickets/1001/status", {"status": "Ready"}),
    ("/console/tickets/1001", {"subject": "Changed"}),
    ("/console/tickets/new", {"subject": "New one"}),
    ("/console/customers", {"display_name": "Cat"}),
    ("/console/customers/1", {"display_name": "Cat"}),
    ("/console/leads", {"name": "Dee"}),
    ("/console/leads/6001", {"status": "lost"}),
    ("/console/leads/6001/convert", {}),
]


@pytest.mark.parametrize("path,form", FORMS)
def test_every_form_refuses_a_post_without_the_session_csrf_token(client, staff, path, form):
    before = snapshot()
    assert_page(client.post(path, data=form), 403)
    assert_page(client.post(path, data={**form, "csrf_token": "forged"}), 403)
    assert snapshot() == before


OTHER_SHOP = [
    ("get", "/console/tickets/2001", {}),
    ("get", "/console/customers/21", {}),
    ("post", "/console/board/move", {"ticket_id": "2001", "status": "Ready"}),
    ("post", "/console/tickets/2001/status", {"status": "Ready"}),
    ("post", "/console/tickets/2001", {"subject": "Mine now"}),
    ("post", "/console/customers/21", {"display_name": "Mine now"}),
    ("post", "/console/leads/6901", {"status": "lost"}),
    ("post", "/console/leads/6901/convert", {}),
    ("post", "/console/tickets/new", {"subject": "On their customer", "customer_id": "21"}),
    ("post", "/console/tickets/1001", {"subject": "x", "customer_id": "21"}),
    ("get", "/console/tickets/1003", {}),  # hidden
    ("get", "/console/tickets/99999999999", {}),
    ("get", "/console/customers/abc", {}),
]


@pytest.mark.parametrize("method,path,form", OTHER_SHOP)
def test_another_shops_ids_are_not_found_pages_and_nothing_is_written(client, staff, method, path, form):
    before = snapshot()
    if method == "get":
        response = client.get(path)
    else:
        response = client.post(path, data={**form, "csrf_token": staff})
    assert response.status_code in (400, 404), page_text(response)[:300]
    assert_page(response, response.status_code)
    if "2001" in path or "21" in path or "6901" in path or form.get("customer_id") == "21":
        assert response.status_code == 404
    assert snapshot() == before


BAD_TICKETS = [
    ({"subject": ""}, "subject"),
    ({"subject": "x" * 256}, "subject"),
    ({"subject": "ok", "due_at": "tomorrow"}, "due_at"),
    ({"subject": "ok", "due_at": "9999-01-01T10:00"}, "due_at"),
    ({"subject": "ok", "priority": "whenever"}, "priority"),
    ({"subject": "ok", "assigned_user_id": "999999"}, "assigned_user_id"),
    ({"subject": "ok", "assigned_user_id": "x"}, "assigned_user_id"),
    ({"subject": "ok", "customer_id": "-1"}, "customer_id"),
    ({"subject": "ok", "device": "a\x00b"}, "device"),
    ({"subject": "ok", "description": "d" * 10_001}, "description"),
    ({"subject": ["a", "b"]}, "subject"),
    ({"subject": "ok", "new_customer_name": "Eve", "new_customer_email": "not-an-email"}, "email"),
    ({"subject": "", "new_customer_name": "Eve"}, "subject"),
]


@pytest.mark.parametrize("form,field", BAD_TICKETS)
def test_a_bad_new_ticket_shows_the_message_beside_the_field_and_writes_nothing(client, staff, form, field):
    before = snapshot()
    response = client.post("/console/tickets/new", data={**form, "csrf_token": staff})
    assert_page(response, 400)
    html = page_text(response)
    assert 'class="field-error"' in html and 'role="alert"' in html
    assert "<h1>New ticket</h1>" in html  # the form again, with what was typed
    assert snapshot() == before


@pytest.mark.parametrize("form,field", BAD_TICKETS[:10])
def test_a_bad_ticket_edit_shows_the_message_and_writes_nothing(client, staff, form, field):
    before = snapshot()
    response = client.post("/console/tickets/1001", data={**form, "csrf_token": staff})
    assert_page(response, 400)
    assert 'class="field-error"' in page_text(response)
    assert snapshot() == before


@pytest.mark.parametrize("status", ["", "Nope", "x" * 65, "Ready\x00"])
def test_a_bad_status_on_the_board_or_panel_shows_a_message_and_writes_nothing(client, staff, status):
    before = snapshot()
    response = client.post(
        "/console/board/move", data={"csrf_token": staff, "ticket_id": "1002", "status": status}
    )
    assert_page(response, 400)
    assert 'id="move-1002-error"' in page_text(response)
    response = client.post("/console/tickets/1002/status", data={"csrf_token": staff, "status": status})
    assert_page(response, 400)
    assert 'id="status-error"' in page_text(response)
    assert snapshot() == before


def test_a_ticket_is_created_with_a_new_customer_and_edited_from_the_panel(client, staff):
    form = {
        "csrf_token": staff,
        "subject": "Water damage",
        "description": "Dropped in a lake",
        "device": "Phone X",
        "serial_number": "SN1",
        "priority": "high",
        "due_at": "2026-12-01T17:00",
        "new_customer_name": "Eve Ng",
        "new_customer_phone": "+15555550199",
        "new_customer_sms_consent": "yes",
    }
    response = client.post("/console/tickets/new", data=form)
    assert response.status_code == 303, page_text(response)[:500]
    ticket = Ticket.select().order_by(Ticket.id.desc()).first()
    customer = Customer.get(Customer.display_name == "Eve Ng")
    assert ticket.customer_id == customer.id and customer.sms_consent and ticket.status == "New"
    assert ticket.due_at.isoformat().startswith("2026-12-01T22:00")  # 17:00 in New York
    created = [(kind, data) for kind, data in events() if kind in ("customer.created", "ticket.created")]
    assert [kind for kind, _ in created] == ["customer.created", "ticket.created"]
    panel = page_text(client.get(response.headers["Location"]))
    assert "Water damage" in panel and "Eve Ng" in panel and "Tue 1 Dec 2026, 17:00" in panel
    mate = page_text(client.get("/console/board"))
    assert "Tue 1 Dec 2026, 17:00" in mate
    edit = {
        "csrf_token": staff,
        "subject": "Water damage (lake)",
        "customer_id": "1",
        "priority": "urgent",
        "due_at": "",
    }
    assert client.post(f"/console/tickets/{ticket.id}", data=edit).status_code == 303
    ticket = Ticket.get_by_id(ticket.id)
    assert ticket.subject == "Water damage (lake)" and ticket.customer_id == 1 and ticket.due_at is None
    assert ticket.device is None  # emptied fields clear
    [updated] = [data for kind, data in events() if kind == "ticket.updated"]
    assert updated["subject"] == "Water damage (lake)" and updated["priority"] == "urgent"


def test_customers_are_searched_created_and_edited_with_sms_consent(client, staff):
    html = page_text(client.get("/console/customers?q=ann"))
    assert "Ann Lee" in html and "Bo Chen" not in html and "Gil" not in html
    assert "Ann Lee" in page_text(client.get("/console/customers?q=5550100"))
    response = client.post(
        "/console/customers", data={"csrf_token": staff, "display_name": "Cat Diaz", "phone": "+15555550111"}
    )
    assert response.status_code == 303
    cat = Customer.get(Customer.display_name == "Cat Diaz")
    assert not cat.sms_consent
    response = client.post(
        f"/console/customers/{cat.id}",
        data={"csrf_token": staff, "display_name": "Cat Diaz", "phone": "+15555550111", "sms_consent": "yes"},
    )
    assert response.status_code == 303 and Customer.get_by_id(cat.id).sms_consent
    assert [kind for kind, _ in events()] == ["customer.created", "customer.updated"]


def test_a_customer_form_says_where_they_came_from_and_the_list_shows_it(client, staff):
    response = client.post(
        "/console/customers", data={"csrf_token": staff, "display_name": "Cat Diaz", "source": "referral"}
    )
    assert response.status_code == 303
    cat = Customer.get(Customer.display_name == "Cat Diaz")
    assert cat.source == "referral" and events()[0][1]["source"] == "referral"
    assert "referral" in page_text(client.get(f"/console/customers/{cat.id}"))
    row = page_text(client.get("/console/customers?q=Cat")).split("Cat Diaz")[1].split("</tr>")[0]
    assert "referral" in row
    edited = client.post(
        f"/console/customers/{cat.id}", data={"csrf_token": staff, "display_name": "Cat Diaz", "source": ""}
    )
    assert edited.status_code == 303 and Customer.get_by_id(cat.id).source is None


@pytest.mark.parametrize(
    "form,field",
    [
        ({"display_name": ""}, "display_name"),
        ({"display_name": "x" * 256}, "display_name"),
        ({"display_name": "Ok", "email": "nope"}, "email"),
        ({"display_name": "Ok", "phone": "1" * 51}, "phone"),
        ({"display_name": "Ok\x00"}, "display_name"),
        ({"display_name": ["a", "b"]}, "display_name"),
        ({"display_name": "Ok", "source": "s" * 65}, "source"),
        ({"display_name": "Ok", "source": "walk\x00in"}, "source"),
    ],
)
def test_a_bad_customer_form_shows_the_message_beside_the_field(client, staff, form, field):
    before = snapshot()
    for path in ("/console/customers", "/console/customers/1"):
        response = client.post(path, data={**form, "csrf_token": staff})
        assert_page(response, 400)
        html = page_text(response)
        assert f'id="{field}-error"' in html or 'class="field-error"' in html
    assert snapshot() == before


def test_leads_are_captured_worked_and_converted_to_a_ticket_in_one_step(client, staff):
    response = client.post(
        "/console/leads",
        data={"csrf_token": staff, "name": "Dee", "phone": "+15555550123", "source": "walk_in"},
    )
    assert response.status_code == 303
    dee = Lead.get(Lead.name == "Dee")
    assert (
        client.post(f"/console/leads/{dee.id}", data={"csrf_token": staff, "status": "contacted"}).status_code
        == 303
    )
    assert Lead.get_by_id(dee.id).status == "contacted"
    response = client.post(
        f"/console/leads/{dee.id}/convert", data={"csrf_token": staff, "subject": "Tablet screen"}
    )
    assert response.status_code == 303
    dee = Lead.get_by_id(dee.id)
    assert dee.status == "converted" and "/console/tickets/" in response.headers["Location"]
    assert Ticket.get_by_id(dee.converted_ticket_id).subject == "Tablet screen"
    kinds = [kind for kind, _ in events()]
    assert kinds[-3:] == ["customer.created", "ticket.created", "lead.converted"]
    before = snapshot()
    again = client.post(f"/console/leads/{dee.id}/convert", data={"csrf_token": staff})
    assert_page(again, 422)
    assert "already converted" in page_text(again) and snapshot() == before


@pytest.mark.parametrize(
    "form",
    [{"name": ""}, {"name": "x" * 256}, {"name": "Ok", "email": "bad"}, {"name": "Ok", "source": "s" * 65}],
)
def test_a_bad_lead_form_shows_the_message_and_writes_nothing(client, staff, form):
    before = snapshot()
    assert_page(client.post("/console/leads", data={**form, "csrf_token": staff}), 400)
    assert_page(client.post("/console/leads/6001", data={"csrf_token": staff, "status": "converted"}), 400)
    assert_page(
        client.post("/console/leads/6001/convert", data={"csrf_token": staff, "subject": "x" * 256}), 400
    )
    assert snapshot() == before


def test_stored_xss_is_escaped_on_every_front_office_page(client, staff):
    form = {"csrf_token": staff, "subject": XSS, "description": XSS, "device": XSS, "serial_number": XSS}
    response = client.post(
        "/console/tickets/new", data={**form, "new_customer_name": XSS, "new_customer_email": "x@example.com"}
    )
    assert response.status_code == 303, page_text(response)[:400]
    ticket = Ticket.select().order_by(Ticket.id.desc()).first()
    client.post("/console/leads", data={"csrf_token": staff, "name": XSS, "source": XSS})
    for path in (
        "/console/board",
        f"/console/tickets/{ticket.id}",
        "/console/customers",
        f"/console/customers/{ticket.customer_id}",
        "/console/leads",
    ):
        html = page_text(client.get(path))
        assert XSS not in html, path
        assert "&lt;script&gt;" in html, path


def test_an_owner_sees_the_same_pages(client, shop):
    sign_in_as(client, *OWNER[:2])
    for path in (
        "/console/board",
        "/console/tickets/1001",
        "/console/tickets/new",
        "/console/customers",
        "/console/customers/1",
        "/console/leads",
    ):
        assert_page(client.get(path), 200)


def test_a_read_only_key_sees_the_board_without_forms_and_is_refused_the_moves(client, load):
    load(tenant_fixture("acme", scopes=["tickets.read", "customers.read", "leads.read"], **ACME))
    token = sign_in(client, "sk_test_acme_token_0001")
    html = page_text(client.get("/console/board"))
    assert 'id="ticket-1001"' in html and "board/move" not in html and 'draggable="true"' not in html
    assert "<form" not in page_text(client.get("/console/leads")).split("</header>")[1]
    before = snapshot()
    for path, form in FORMS:
        assert_page(client.post(path, data={**form, "csrf_token": token}), 403)
    assert snapshot() == before

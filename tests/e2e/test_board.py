"""The front office in real headless Chromium: a teammate signs in, creates a customer and a ticket,
drags the ticket's card to another column of the queue board, and the event says queue_drag and
names the teammate; axe-core finds nothing serious on the new pages. SQLite only (the pages do not
depend on the backend; tests/console/test_board_pages.py covers both)."""

from datetime import datetime

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from shop.models import Customer, Event, Ticket
from tests.helpers import tenant_fixture
from tests.helpers.axe import axe_violations
from tests.helpers.console import OWNER, STAFF, teammates
from tests.helpers.processes import wait_until

pytestmark = [pytest.mark.sqlite_only, pytest.mark.usefixtures("cheap_password_hashes")]

# what a mouse drag fires, dispatched with one DataTransfer (chromedriver's own drag sends no
# HTML5 drag events): the card's dragstart, the column's dragover and drop, the card's dragend
DRAG = """
const card = document.getElementById(arguments[0]);
const column = document.querySelector('.column[data-status="' + arguments[1] + '"]');
const data = new DataTransfer();
const fire = (target, type) => target.dispatchEvent(
  new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: data}));
fire(card, 'dragstart'); fire(column, 'dragenter'); fire(column, 'dragover');
fire(column, 'drop'); fire(card, 'dragend');
"""


@pytest.fixture
def front_office(load):
    load(tenant_fixture("acme", users=teammates(OWNER, STAFF)))


def assert_accessible(console, page: str) -> None:
    found = axe_violations(console.driver)
    assert not found, f"{page}: {found}"


def fill(console, field_id: str, value: str) -> None:
    box = console.driver.find_element(By.ID, field_id)
    box.clear()
    box.send_keys(value)


def test_a_teammate_creates_a_customer_and_a_ticket_and_drags_it_across_the_board(front_office, console):
    console.sign_in_as(*STAFF[:2])
    console.open("/console/board")
    console.wait_for_heading("Queue board")
    assert_accessible(console, "empty board")
    console.open("/console/customers")
    assert_accessible(console, "customers (empty)")
    fill(console, "display_name", "Ann <b>Lee</b>")
    fill(console, "phone", "+15555550100")
    console.click("#sms_consent")
    console.click("form.record-form button[type=submit]")
    console.wait_for_heading("Ann <b>Lee</b>")
    assert Customer.get().sms_consent
    assert_accessible(console, "customer")
    console.click("a.button")  # new ticket for this customer
    console.wait_for_heading("New ticket")
    assert_accessible(console, "new ticket")
    fill(console, "subject", "Cracked screen")
    fill(console, "device", "Phone X")
    console.click("form.record-form button[type=submit]")
    wait_until(lambda: console.heading().startswith("Ticket #"), timeout=20)
    ticket = Ticket.get()
    assert ticket.customer_id == Customer.get().id and ticket.status == "New"
    assert_accessible(console, "ticket panel")
    console.open("/console/leads")
    assert_accessible(console, "leads (empty)")
    fill(console, "name", "Cy Park")
    fill(console, "source", "phone_call")
    console.click("form.record-form button[type=submit]")
    wait_until(lambda: console.driver.find_elements(By.CSS_SELECTOR, "tr[id^=lead-]"), timeout=20)
    assert_accessible(console, "leads")
    console.open("/console/board")
    console.wait_for_heading("Queue board")
    assert_accessible(console, "board")
    console.driver.execute_script(DRAG, f"ticket-{ticket.id}", "In Progress")
    wait_until(lambda: Ticket.get_by_id(ticket.id).status == "In Progress", timeout=20)
    wait_until(lambda: "moved" in console.driver.current_url, timeout=20)
    column = console.driver.find_element(By.CSS_SELECTOR, '.column[data-status="In Progress"]')
    assert "Cracked screen" in column.text
    [moved] = [e.data for e in Event.select() if e.type == "ticket.status_changed"]
    assert moved["change_source"] == "queue_drag" and moved["changed_by"] == STAFF[0]
    assert moved["previous_status"] == "New" and moved["status"] == "In Progress"
    # without a drag: the card's own form does the same
    Select(console.driver.find_element(By.ID, f"move-{ticket.id}")).select_by_visible_text("Ready")
    console.click(f"#ticket-{ticket.id} form.move button")
    wait_until(lambda: Ticket.get_by_id(ticket.id).status == "Ready", timeout=20)
    console.wait_for_heading("Queue board")
    busy_day()
    console.open("/console/board")
    console.wait_for_heading("Queue board")
    assert_accessible(console, "busy board")
    console.screenshot("console-board")


def busy_day() -> None:
    """A few more repairs in several columns, for the board's screenshot (docs/console-board.png)."""
    from shop.domain import actor
    from shop.domain.records import customers, tickets

    someone = actor.in_app("olga@acme.test", "dashboard")
    repairs = [
        ("Bo Chen", "Battery drains overnight", "Tablet T2", "New", "2026-12-02T17:00:00+00:00"),
        ("Cy Park", "No sound from speaker", "Phone Y", "In Progress", "2026-12-01T21:00:00+00:00"),
        ("Dee Ruiz", "Replace charging port", "Phone X", "Waiting for Parts", None),
        ("Eve Ng", "Water damage check", "Laptop L5", "New", "2026-12-03T15:30:00+00:00"),
    ]
    for name, subject, device, status, due in repairs:
        person = customers.create_customer("acme", {"display_name": name}, someone)
        fields = {"customer_id": int(person["id"]), "subject": subject, "device": device, "status": status}
        if due:
            fields["due_at"] = datetime.fromisoformat(due).replace(tzinfo=None)
        tickets.create_ticket("acme", fields, someone)

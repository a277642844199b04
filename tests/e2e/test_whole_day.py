"""A whole day of the shop in real headless Chromium (issue 27, "What must be shown"): a teammate signs
in with email and password, creates a customer and a ticket, drags the ticket across the queue board,
writes and sends an estimate; the customer opens the emailed link on a phone and approves it; the
teammate invoices, takes a payment and a partial refund; another customer books online on a phone.
The service runs under gunicorn with a real consumer, a real SMTP server and a real HTTPS webhook
receiver: every event of the day arrives exactly once, signed, with who did it. Every page is
axe-clean and has its screenshot (with SHOP_TEST_ARTIFACTS set; docs/*.png are copied from there,
one name per page). SQLite only: the pages do not depend on the backend."""

import re
import time
from collections import Counter
from email import message_from_bytes

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from shop.domain.records.invoices import with_amounts
from shop.models import Appointment, Event, Invoice, Ticket, WebhookDelivery
from tests.e2e.test_board import DRAG
from tests.e2e.test_webhook_delivery import TRUSTED, consumer_env, subscribe
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.appointments import BOOKING
from tests.helpers.axe import axe_violations
from tests.helpers.browser import ConsoleServer
from tests.helpers.console import OWNER, STAFF, teammates
from tests.helpers.doc_receiver import doc_python_module
from tests.helpers.processes import wait_until
from tests.helpers.receivers import SmtpSink
from tests.helpers.webhook_receiver import WebhookReceiver

pytestmark = [pytest.mark.sqlite_only, pytest.mark.usefixtures("cheap_password_hashes")]
PHONE = (390, 844)
DESKTOP = (1280, 900)
# every event of the day: the two emails (estimate and invoice links) are message.sent
DAY = {
    "customer.created": 1,
    "ticket.created": 1,
    "ticket.status_changed": 1,
    "estimate.sent": 1,
    "message.sent": 2,
    "estimate.approved": 1,
    "invoice.created": 1,
    "invoice.sent": 1,
    "payment.recorded": 1,
    "invoice.paid": 1,
    "payment.refunded": 1,
    "invoice.refunded": 1,
    "appointment.created": 1,
}
LINK = re.compile(r"https?://\S+/portal/estimates/[A-Za-z0-9_-]+")


@pytest.fixture
def shop(app, load, monkeypatch):
    """acme with online booking and two teammates; its API key's headers (to subscribe)."""
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", TRUSTED)
    load(tenant_fixture("acme", booking=BOOKING, users=teammates(OWNER, STAFF)))
    return auth_headers("sk_test_acme_token_0001")


@pytest.fixture
def console_server(app, tmp_path):  # app: the pass's database, which the server opens
    """The service under gunicorn with a one-second minimum fill time for the customers' forms."""
    server = ConsoleServer(tmp_path / "gunicorn.log", SHOP_BOOKING_MIN_FILL_SECONDS="1")
    yield server
    server.close()


def look(console, page: str, screenshot: str | None = None) -> None:
    """The page is axe-clean (nothing serious), and its screenshot is saved under this name."""
    found = axe_violations(console.driver)
    assert not found, f"{page}: {found}"
    if screenshot:
        console.screenshot(screenshot)


def fill(console, fields: dict) -> None:
    for element_id, value in fields.items():
        box = console.driver.find_element(By.ID, element_id)
        box.clear()
        box.send_keys(value)


def fits_a_phone(console) -> bool:
    return console.driver.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]


def test_a_whole_day_of_the_shop_reaches_the_webhook_receiver_once_each_signed(
    client, shop, console, start_consumer, tmp_path
):
    with SmtpSink() as sink, WebhookReceiver(tmp_path) as receiver:
        secret = subscribe(client, shop, receiver)["signing_secret"]
        start_consumer(SHOP_SMTP_URL=sink.url, **consumer_env(receiver))
        ticket_id = morning_at_the_counter(console)
        send_the_estimate(console, ticket_id)
        link = wait_for_the_estimate_email(sink)
        the_customer_approves_on_a_phone(console, link)
        invoice_pay_and_refund(console, ticket_id)
        a_customer_books_online_on_a_phone(console)
        emitted = wait_for_every_delivery()
        received = receiver.events()
    assert_delivered_exactly_once(received, emitted, secret)
    assert_who_did_what(received, ticket_id)


# the teammate's morning: sign in, a customer, a ticket, the board


def morning_at_the_counter(console) -> int:
    """Sid signs in, adds Ann (with her email), opens her ticket and drags it to In Progress."""
    console.open("/console/sign-in")
    look(console, "sign-in", "console-sign-in")
    console.sign_in_as(*STAFF[:2])
    look(console, "overview (teammate)", "console-overview")
    console.open("/console/customers")
    console.wait_for_heading("Customers")
    look(console, "customers (empty)", "console-customers-empty")
    fill(console, {"display_name": "Ann Lee", "email": "ann@example.com", "phone": "+15555550100"})
    console.click("#sms_consent")
    console.click("form.record-form button[type=submit]")
    console.wait_for_heading("Ann Lee")
    look(console, "customer", "console-customer")
    console.click("a.button")  # a new ticket for this customer
    console.wait_for_heading("New ticket")
    fill(console, {"subject": "Cracked screen", "device": "Phone X", "description": "Dropped on tiles."})
    look(console, "new ticket", "console-ticket-new")
    console.click("form.record-form button[type=submit]")
    wait_until(lambda: console.heading().startswith("Ticket #"), timeout=20)
    ticket = Ticket.get()
    look(console, "ticket panel", "console-ticket")
    console.open("/console/board")
    console.wait_for_heading("Queue board")
    console.driver.execute_script(DRAG, f"ticket-{ticket.id}", "In Progress")
    wait_until(lambda: Ticket.get_by_id(ticket.id).status == "In Progress", timeout=20)
    wait_until(lambda: "moved" in console.driver.current_url, timeout=20)
    column = console.driver.find_element(By.CSS_SELECTOR, '.column[data-status="In Progress"]')
    assert "Cracked screen" in column.text
    look(console, "board", "console-board")
    return ticket.id


def send_the_estimate(console, ticket_id: int) -> None:
    """Sid writes a two-line estimate for the ticket ($150.00) and sends it to Ann."""
    console.open(f"/console/estimates/new?ticket_id={ticket_id}")
    console.wait_for_heading("New estimate")
    fill(console, {"description-1": "Screen replacement", "price-1": "120"})
    fill(console, {"description-2": "Screen protector", "quantity-2": "2", "price-2": "15"})
    look(console, "new estimate", "console-estimate-new")
    console.click("#estimate-form button[type=submit]")
    wait_until(lambda: console.heading().startswith("Estimate EST-"), timeout=20)
    assert "$150.00" in console.text("main")
    console.click("#send-form button[type=submit]")
    console.wait_for_text("emailed")
    look(console, "estimate sent", "console-estimate")


def wait_for_the_estimate_email(sink) -> str:
    """The portal link, as Ann's mailbox received it over SMTP."""
    wait_until(lambda: sink.messages, timeout=60)
    [envelope] = sink.messages
    mime = message_from_bytes(envelope.content)
    assert envelope.rcpt_tos == ["ann@example.com"] and mime["Subject"].startswith("Estimate EST-")
    [link] = LINK.findall(mime.get_payload(decode=True).decode())
    return link


# the customer's phone


def as_a_customer_on_a_phone(console) -> None:
    """A fresh visitor: no console session, a phone-sized window."""
    console.driver.delete_all_cookies()
    console.driver.set_window_size(*PHONE)


def the_customer_approves_on_a_phone(console, link: str) -> None:
    """Ann opens the emailed link on her phone and approves, typing her name."""
    as_a_customer_on_a_phone(console)
    console.driver.get(link)
    wait_until(lambda: console.heading().startswith("Estimate EST-"), timeout=20)
    assert "Acme" in console.text("header") and "$150.00" in console.text(".lines")
    assert fits_a_phone(console)
    look(console, "portal estimate", "portal-estimate")
    console.driver.find_element(By.ID, "name").send_keys("Ann Lee")
    time.sleep(1.2)  # a person takes longer than the server's minimum fill time
    console.click("#approve-form button[type=submit]")
    console.wait_for_text("You approved this estimate")
    assert fits_a_phone(console)
    look(console, "portal estimate approved", "portal-estimate-approved")


# the teammate's afternoon: the invoice, a payment, a partial refund


def invoice_pay_and_refund(console, ticket_id: int) -> None:
    """Sid invoices the approved work, sends it, takes $150.00 by card and refunds $20.00 of it."""
    console.driver.set_window_size(*DESKTOP)
    console.sign_in_as(*STAFF[:2])
    console.open("/console/estimates")
    console.wait_for_heading("Estimates")
    look(console, "estimates", "console-estimates")
    console.click("main table a")
    wait_until(lambda: console.heading().startswith("Estimate EST-"), timeout=20)
    assert "Approved by the customer (Ann Lee)" in console.text("main")
    look(console, "estimate approved", "console-estimate-approved")
    console.driver.find_element(By.LINK_TEXT, "Invoice this ticket").click()
    console.wait_for_heading("New invoice")
    assert console.driver.find_element(By.ID, "ticket_id").get_attribute("value") == str(ticket_id)
    fill(console, {"description-1": "Screen replacement", "price-1": "120"})
    fill(console, {"description-2": "Screen protector", "quantity-2": "2", "price-2": "15"})
    look(console, "new invoice", "console-invoice-new")
    console.click("#invoice-form button[type=submit]")
    wait_until(lambda: console.heading().startswith("Invoice INV-"), timeout=20)
    console.click("#send-form button[type=submit]")
    console.wait_for_text("Sent.")
    Select(console.driver.find_element(By.ID, "pay-method")).select_by_value("card")
    assert console.driver.find_element(By.ID, "pay-amount").get_attribute("value") == "150.00"
    console.click("#pay-form button[type=submit]")
    console.wait_for_text("Payment of 150.00 recorded.")
    assert console.text("#amount-due") == "$0.00"
    fill(console, {"refund-amount": "20.00", "refund-reason": "Protector not fitted"})
    console.click("#refund-form button[type=submit]")
    console.wait_for_text("Refund recorded.")
    invoice = with_amounts(Invoice.get(Invoice.ticket == ticket_id))
    assert (invoice.status, invoice.amount_paid, invoice.amount_refunded) == ("paid", 15000, 2000)
    look(console, "invoice paid and partly refunded", "console-invoice")
    console.open("/console/invoices")
    console.wait_for_heading("Invoices")
    look(console, "invoices", "console-invoices")


# another customer books online


def a_customer_books_online_on_a_phone(console) -> None:
    """Bo opens /book/acme on a phone, holds a free time a few days ahead and books it."""
    as_a_customer_on_a_phone(console)
    console.open("/book/acme")
    console.wait_for_heading("Book a visit")
    assert fits_a_phone(console)
    days = console.driver.find_elements(By.CSS_SELECTOR, ".days a.day")
    days[min(2, len(days) - 1)].click()  # a few days ahead: the minimum notice never empties it
    wait_until(lambda: console.driver.find_elements(By.CSS_SELECTOR, ".slot.free label"), timeout=20)
    console.driver.execute_script("document.getElementById('times-heading').scrollIntoView()")
    look(console, "booking page", "booking-phone")
    console.click(".slot.free label")
    console.click("#hold-form button[type=submit]")
    console.wait_for_heading("Your details")
    fill(console, {"customer_name": "Bo Chen", "customer_phone": "+15555550123"})
    fill(console, {"customer_email": "bo@example.com"})
    look(console, "details form", "booking-details-phone")
    time.sleep(1.2)
    console.click("#details-form button[type=submit]")
    console.wait_for_heading("You are booked")
    assert "For Bo Chen" in console.text(".summary") and fits_a_phone(console)
    look(console, "booking confirmed", "booking-confirmed-phone")


# what the receiver got


def wait_for_every_delivery() -> dict:
    """Every event of the day once its delivery is done (none pending); the events by id."""

    def settled():
        deliveries = list(WebhookDelivery.select())
        return len(deliveries) == Event.select().count() and all(d.status == "delivered" for d in deliveries)

    wait_until(settled, timeout=60, interval=0.3)
    return {event.id: event for event in Event.select()}


def assert_delivered_exactly_once(received: list[dict], emitted: dict, secret: str) -> None:
    """One request per event of the Event table, none twice, none missing, each signed and equal to
    the stored event (verified with the receiver code printed in docs/webhooks.md)."""
    docs = doc_python_module()
    for item in received:
        docs.verify_signature(item["raw"], item["headers"]["Service-Signature"], [secret])
        assert item["headers"]["Service-Event-Id"] == item["body"]["id"]
    ids = Counter(item["body"]["id"] for item in received)
    assert [event_id for event_id, n in ids.items() if n > 1] == [], "delivered twice"
    assert set(ids) == set(emitted), f"missing {set(emitted) - set(ids)}, unknown {set(ids) - set(emitted)}"
    for item in received:
        stored = emitted[item["body"]["id"]]
        assert (item["body"]["type"], item["body"]["data"]) == (stored.type, stored.data)


def assert_who_did_what(received: list[dict], ticket_id: int) -> None:
    """The day holds each thing it did, and its events say who did it: the board's drag, the
    customer's approval, the online booking."""
    by_type: dict = {}
    for item in received:
        by_type.setdefault(item["body"]["type"], []).append(item["body"]["data"])
    assert {kind: len(datas) for kind, datas in by_type.items()} == DAY
    [moved] = by_type["ticket.status_changed"]
    assert moved["id"] == str(ticket_id)
    assert (moved["previous_status"], moved["status"]) == ("New", "In Progress")
    assert (moved["change_source"], moved["changed_by"]) == ("queue_drag", STAFF[0])
    [approved] = by_type["estimate.approved"]
    assert approved["approved_by"] == "customer" and "Ann Lee" not in str(approved)
    [booked] = by_type["appointment.created"]
    assert booked["source"] == "online_booking"
    assert booked["id"] == str(Appointment.get(Appointment.customer_name == "Bo Chen").id)
    [refund] = by_type["payment.refunded"]
    assert refund["amount"] == 2000

"""An estimate from the front office to the customer's phone in real headless Chromium under gunicorn:
a teammate writes and sends it in the console, the customer opens the emailed link on a 390x844
window and approves it; axe-core finds nothing serious on any page (SQLite only: the pages do not
depend on the backend; the test-client tests cover both)."""

import time
from email import message_from_bytes

import pytest
from selenium.webdriver.common.by import By

from shop.models import Estimate, Event
from tests.helpers.axe import axe_violations
from tests.helpers.browser import ConsoleServer
from tests.helpers.console import STAFF
from tests.helpers.money import acme_fixture
from tests.helpers.processes import wait_until
from tests.helpers.receivers import SmtpSink

pytestmark = [pytest.mark.sqlite_only, pytest.mark.usefixtures("cheap_password_hashes")]
PHONE = (390, 844)


@pytest.fixture
def shop(load):
    """acme: Ann (with an email address) and her ticket 1001; Sid, a staff teammate."""
    from tests.helpers.console import teammates

    acme = acme_fixture(users=teammates(STAFF))
    acme["customers"][0]["email"] = "ann@example.com"
    load(acme)


@pytest.fixture
def console_server(app, tmp_path):  # app: the pass's database, which the server opens
    server = ConsoleServer(tmp_path / "gunicorn.log", SHOP_BOOKING_MIN_FILL_SECONDS="1")
    yield server
    server.close()


def assert_accessible(console, page: str) -> None:
    found = axe_violations(console.driver)
    assert not found, f"{page}: {found}"


def test_a_teammate_sends_an_estimate_and_the_customer_approves_it_on_a_phone(shop, console, start_consumer):
    with SmtpSink() as sink:
        start_consumer(SHOP_SMTP_URL=sink.url)
        link = send_from_the_console(console)
        wait_until(lambda: sink.messages, timeout=60)
    [envelope] = sink.messages
    mime = message_from_bytes(envelope.content)
    assert envelope.rcpt_tos == ["ann@example.com"] and mime["Subject"].startswith("Estimate EST-")
    assert link in mime.get_payload(decode=True).decode()
    approve_on_a_phone(console, link)


def send_from_the_console(console) -> str:
    """Sid writes a two-line estimate for ticket 1001 and sends it; the portal link the page shows."""
    console.sign_in_as(*STAFF[:2])
    console.open("/console/estimates/new?ticket_id=1001")
    console.wait_for_heading("New estimate")
    assert_accessible(console, "new estimate")
    fill = {"description-1": "Screen replacement", "price-1": "120", "description-2": "Screen protector"}
    for element_id, value in fill.items():
        console.driver.find_element(By.ID, element_id).send_keys(value)
    quantity = console.driver.find_element(By.ID, "quantity-2")
    quantity.clear()
    quantity.send_keys("2")
    console.driver.find_element(By.ID, "price-2").send_keys("15")
    console.click("#estimate-form button[type=submit]")
    wait_until(lambda: console.heading().startswith("Estimate EST-"), timeout=20)
    assert "$150.00" in console.text("main")
    console.click("#send-form button[type=submit]")
    console.wait_for_text("emailed")
    assert_accessible(console, "estimate sent")
    return console.driver.find_element(By.CSS_SELECTOR, "main .secret a").get_attribute("href")


def approve_on_a_phone(console, link: str) -> None:
    """The customer opens the link on a phone-sized window and approves, typing their name."""
    console.driver.delete_all_cookies()
    console.driver.set_window_size(*PHONE)
    console.driver.get(link)
    wait_until(lambda: console.heading().startswith("Estimate EST-"), timeout=20)
    assert "Acme" in console.text("header") and "$150.00" in console.text(".lines")
    assert console.driver.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    assert_accessible(console, "portal estimate")
    console.screenshot("portal-estimate")
    console.driver.find_element(By.ID, "name").send_keys("Ann Lee")
    time.sleep(1.2)  # a person takes longer than the server's minimum fill time
    console.click("#approve-form button[type=submit]")
    console.wait_for_text("You approved this estimate")
    assert_accessible(console, "portal estimate approved")
    console.screenshot("portal-estimate-approved")
    stored = Estimate.get(Estimate.ticket == 1001, Estimate.status == "approved")
    assert stored.decision_name == "Ann Lee" and stored.decision_ip_address == "127.0.0.1"
    [approved] = [e.data for e in Event.select() if e.type == "estimate.approved"]
    assert approved["approved_by"] == "customer" and approved["id"] == str(stored.id)
    assert "Ann Lee" not in str(approved) and "127.0.0.1" not in str(approved)

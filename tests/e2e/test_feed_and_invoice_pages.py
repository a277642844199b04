"""The two pages no other browser test opened, in real headless Chromium: an owner makes a calendar
feed on the console (its address shown once, with the webcal link) and revokes it; a customer opens
an invoice's emailed link on a phone. axe-core finds nothing serious on either (SQLite only: the
pages do not depend on the backend; the test-client tests cover both)."""

import hashlib

import pytest
from selenium.webdriver.common.by import By

from shop.models import CalendarFeed, Invoice
from tests.helpers.axe import axe_violations
from tests.helpers.console import OWNER, teammates
from tests.helpers.money import acme_fixture
from tests.helpers.processes import wait_until

pytestmark = [pytest.mark.sqlite_only, pytest.mark.usefixtures("cheap_password_hashes")]
PHONE = (390, 844)
INVOICE_TOKEN = "invoice-link-token-for-the-browser-test-0001"


@pytest.fixture
def shop(load):
    every_day = {d: [["09:00", "17:00"]] for d in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")}
    acme = acme_fixture(
        users=teammates(OWNER),
        invoices=[{"id": 3001, "ticket_id": 1001, "status": "sent", "total": 15000}],
        booking={"enabled": True, "hours": every_day},
    )
    load(acme)
    # the link's token as the invoice's send would have made it (only its hash is kept)
    token_hash = hashlib.sha256(INVOICE_TOKEN.encode()).hexdigest()
    Invoice.update(portal_token_hash=token_hash).where(Invoice.id == 3001).execute()


def assert_accessible(console, page: str) -> None:
    found = axe_violations(console.driver)
    assert not found, f"{page}: {found}"


def test_an_owner_makes_a_calendar_feed_and_revokes_it(shop, console):
    console.sign_in_as(*OWNER[:2])
    console.open("/console/calendar/feeds")
    console.wait_for_heading("Calendar feeds")
    assert_accessible(console, "feeds (none)")
    console.driver.find_element(By.ID, "description").send_keys("Front desk iPad")
    console.click("#make-feed button[type=submit]")
    console.wait_for_text("webcal://")
    feed = CalendarFeed.get()
    assert feed.description == "Front desk iPad" and feed.tenant_id == "acme"
    assert_accessible(console, "feed made")
    console.screenshot("console-calendar-feeds")
    console.open("/console/calendar/feeds")  # shown once: the address is not on the page again
    console.wait_for_heading("Calendar feeds")
    assert "webcal://" not in console.text("main") and "Front desk iPad" in console.text("main")
    console.driver.execute_script("window.confirm = function () { return true; };")
    console.click(f"#feed-{feed.id} button.revoke")
    wait_until(lambda: CalendarFeed.get_by_id(feed.id).revoked_at is not None, timeout=20)


def test_a_customer_opens_an_invoice_link_on_a_phone(shop, console):
    console.driver.set_window_size(*PHONE)
    console.open(f"/portal/invoices/{INVOICE_TOKEN}")
    console.wait_for_text("150.00")
    assert console.driver.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    assert "Acme" in console.driver.page_source
    assert_accessible(console, "invoice portal")
    console.screenshot("portal-invoice-phone")

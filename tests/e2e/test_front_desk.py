"""The front desk in real headless Chromium against the service under gunicorn: a teammate signs in
with email and password, a customer books on a phone-sized window, axe-core finds nothing serious.
Browser tests run on one backend (the pages do not depend on it; the API tests cover both)."""

import time

import pytest
from selenium.webdriver.common.by import By

from shop.models import Appointment, Event
from tests.helpers import tenant_fixture
from tests.helpers.appointments import BOOKING
from tests.helpers.axe import axe_violations
from tests.helpers.browser import ConsoleServer
from tests.helpers.console import OWNER, STAFF, teammates
from tests.helpers.processes import wait_until

pytestmark = [pytest.mark.sqlite_only, pytest.mark.usefixtures("cheap_password_hashes")]
PHONE = (390, 844)


@pytest.fixture
def front_desk(load):
    """acme with online booking and two teammates (hashed at the tests' cheaper scrypt cost)."""
    load(tenant_fixture("acme", booking=BOOKING, users=teammates(OWNER, STAFF)))


@pytest.fixture
def console_server(app, tmp_path):  # app: the pass's database, which the server opens
    """The service under gunicorn with a one-second minimum fill time for the booking form."""
    server = ConsoleServer(tmp_path / "gunicorn.log", SHOP_BOOKING_MIN_FILL_SECONDS="1")
    yield server
    server.close()


def assert_accessible(console, page: str) -> None:
    found = axe_violations(console.driver)
    assert not found, f"{page}: {found}"


def test_a_teammate_signs_in_with_email_and_password_and_sees_the_console(front_desk, console):
    console.open("/console/sign-in")
    assert_accessible(console, "sign-in")
    console.screenshot("console-sign-in")
    console.sign_in_as(*STAFF[:2])
    assert "sid@acme.test" in console.text("header .who") and "staff" in console.text("header .who")
    nav = [a.text for a in console.driver.find_elements(By.CSS_SELECTOR, "nav a")]
    assert "Webhooks" not in nav and "Calendar" in nav
    assert_accessible(console, "overview (teammate)")
    cookie = console.driver.get_cookie("shop_console")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    console.open("/console/webhooks")
    assert console.heading() == "Not allowed" and "owners" in console.text("main .error")
    assert_accessible(console, "owner page refused")
    console.click("header .who button")
    console.wait_for_heading("Sign in")
    console.sign_in_as(*OWNER[:2])
    console.open("/console/webhooks")
    console.wait_for_heading("Webhooks")


def test_a_wrong_password_is_shown_beside_the_field(front_desk, console):
    console.open("/console/sign-in")
    console.driver.find_element(By.ID, "email").send_keys(OWNER[0])
    console.driver.find_element(By.ID, "password").send_keys("not-the-password")
    console.click("#teammate-form button[type=submit]")
    wait_until(lambda: console.driver.find_elements(By.ID, "password-error"), timeout=20)
    assert console.driver.find_element(By.ID, "password").get_attribute("aria-invalid") == "true"
    assert_accessible(console, "sign-in with an error")


def test_a_customer_books_on_a_phone_and_the_appointment_and_its_event_exist(front_desk, console):
    console.driver.set_window_size(*PHONE)
    console.open("/book/acme")
    console.wait_for_heading("Book a visit")
    assert console.driver.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    assert_accessible(console, "booking page")
    # a day a few days ahead that is open, so the minimum notice never empties it
    days = console.driver.find_elements(By.CSS_SELECTOR, ".days a.day")
    days[min(2, len(days) - 1)].click()
    wait_until(lambda: console.driver.find_elements(By.CSS_SELECTOR, ".slot.free label"), timeout=20)
    console.driver.execute_script("document.getElementById('times-heading').scrollIntoView()")
    console.screenshot("booking-phone")
    chosen = console.driver.find_element(By.CSS_SELECTOR, ".slot.free label")
    time_text = chosen.find_element(By.CSS_SELECTOR, ".time").text
    chosen.click()
    console.click("#hold-form button[type=submit]")
    console.wait_for_heading("Your details")
    assert time_text in console.text(".summary .when")
    assert_accessible(console, "details form")
    console.driver.find_element(By.ID, "customer_name").send_keys("Ann <b>Lee</b>")
    console.driver.find_element(By.ID, "customer_phone").send_keys("+15555550100")
    console.driver.find_element(By.ID, "customer_email").send_keys("ann@example.com")
    console.screenshot("booking-details-phone")
    time.sleep(1.2)  # a person takes longer than the server's minimum fill time
    console.click("#details-form button[type=submit]")
    console.wait_for_heading("You are booked")
    assert "For Ann <b>Lee</b>" in console.text(".summary")  # shown as typed, never as markup
    assert console.driver.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    assert_accessible(console, "confirmation")
    console.screenshot("booking-confirmed-phone")
    booked = Appointment.get()
    assert booked.source == "online_booking" and booked.customer_name == "Ann <b>Lee</b>"
    created = [e.data for e in Event.select() if e.type == "appointment.created"]
    assert [c["id"] for c in created] == [str(booked.id)]


def test_a_bad_details_form_shows_each_error_beside_its_field_on_a_phone(front_desk, console):
    console.driver.set_window_size(*PHONE)
    console.open("/book/acme")
    days = console.driver.find_elements(By.CSS_SELECTOR, ".days a.day")
    days[min(2, len(days) - 1)].click()
    wait_until(lambda: console.driver.find_elements(By.CSS_SELECTOR, ".slot.free label"), timeout=20)
    console.click(".slot.free label")
    console.click("#hold-form button[type=submit]")
    console.wait_for_heading("Your details")
    console.driver.find_element(By.ID, "customer_email").send_keys("not-an-email")
    time.sleep(1.2)
    console.click("#details-form button[type=submit]")
    wait_until(lambda: console.driver.find_elements(By.ID, "customer_name-error"), timeout=20)
    for field in ("customer_name", "customer_phone", "customer_email"):
        assert console.driver.find_element(By.ID, f"{field}-error").is_displayed(), field
    assert console.text("#customer_name-error") == "Please fill this in."
    assert_accessible(console, "details form with errors")
    console.screenshot("booking-errors-phone")
    assert Appointment.select().count() == 0

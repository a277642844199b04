"""The console's Calendar and Conversations in real headless Chromium against the service under
gunicorn (and a real consumer for sends); screenshots of each page go to the test's output folder."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from shop.models import Appointment, Event, Message
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.appointments import BASE, BOOKING, NEW
from tests.helpers.axe import axe_violations
from tests.helpers.messages import ANN_PHONE, shop_fixture
from tests.helpers.processes import wait_until

TOKEN = "sk_test_acme_token_0001"
API = auth_headers(TOKEN)


def next_monday() -> str:
    """A Monday 7 to 13 days ahead in the shop's timezone: open, bookable, well past the notice."""
    today = datetime.now(ZoneInfo("America/New_York")).date()
    return (today + timedelta(days=7 - today.weekday() + 7)).isoformat()


def remaining(console, day: str, time: str) -> str:
    """A slot's remaining places as the page shows them ('' mid-reload)."""
    try:
        return console.text(f"#slot-{day}-{time.replace(':', '')} .remaining")
    except Exception:  # the page is being replaced
        return ""


def accept_confirm(console) -> None:
    """Say yes to the page's "are you sure" (console.js asks before a cancel)."""
    WebDriverWait(console.driver, 10).until(expected_conditions.alert_is_present()).accept()


def test_the_calendar_shows_a_booked_slot_s_capacity_fall(client, load, signed_in):
    load(tenant_fixture("acme", booking=BOOKING))
    day = next_monday()
    console = signed_in(TOKEN)
    console.click("nav a[href='/console/calendar']")
    console.wait_for_heading("Calendar")
    console.screenshot("calendar-this-week")
    console.open(f"/console/calendar?week={day}")
    console.wait_for_heading("Calendar")
    assert remaining(console, day, "10:00") == "2"
    console.screenshot("calendar")
    console.click(f"#slot-{day}-1000 a")  # a free slot's Book link fills in the form
    assert console.driver.find_element(By.ID, "scheduled_time").get_attribute("value") == "10:00"
    console.driver.find_element(By.ID, "customer_name").send_keys("Cy Walk-in")
    console.driver.find_element(By.ID, "customer_phone").send_keys("+15555550111")
    console.click("#book-submit")
    wait_until(lambda: remaining(console, day, "10:00") == "1", timeout=20)
    assert "Booked." in console.text("main .notice")
    assert Appointment.get(Appointment.customer_name == "Cy Walk-in").source == "staff"
    response = client.post(BASE, json={**NEW, "scheduled_date": day}, headers=API)  # the API books too
    assert response.status_code == 201
    console.open(f"/console/calendar?week={day}")
    wait_until(lambda: remaining(console, day, "10:00") == "0", timeout=20)
    reasons = console.driver.find_element(By.CSS_SELECTOR, f"#slot-{day}-1000 details")
    reasons.find_element(By.TAG_NAME, "summary").click()  # tap to read why
    assert "Full: 2 booked and 0 held of 2 places." in reasons.text
    console.screenshot("calendar-after-booking")
    console.driver.set_window_size(390, 844)
    assert console.driver.execute_script("return document.documentElement.scrollWidth") <= 390
    console.screenshot("calendar-phone")


def test_cancelling_an_appointment_from_the_calendar_changes_its_status(client, load, signed_in):
    load(tenant_fixture("acme", booking=BOOKING))
    day = next_monday()
    booked = client.post(BASE, json={**NEW, "scheduled_date": day}, headers=API).get_json()["id"]
    console = signed_in(TOKEN)
    console.open(f"/console/calendar?week={day}")
    console.wait_for_heading("Calendar")
    assert "scheduled" in console.text(f"#appointment-{booked} .appointment-status")
    assert remaining(console, day, "10:00") == "1"
    console.driver.find_element(By.ID, f"reason-{booked}").send_keys("Customer called")
    console.click(f"#appointment-{booked} button.cancel")
    accept_confirm(console)
    wait_until(lambda: "cancelled" in _status(console, booked), timeout=20)
    assert Appointment.get_by_id(booked).status == "cancelled"
    assert "reason: Customer called" in console.text(f"#appointment-{booked}")
    assert remaining(console, day, "10:00") == "2"  # the place is free again
    console.screenshot("calendar-cancelled")


# what a mouse drag fires, dispatched with one DataTransfer (chromedriver's own drag sends no HTML5
# drag events): the appointment's dragstart, the slot's dragover and drop, the appointment's dragend
DRAG = """
const item = document.getElementById(arguments[0]);
const slot = document.getElementById(arguments[1]);
const data = new DataTransfer();
const fire = (target, type) => target.dispatchEvent(
  new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: data}));
fire(item, 'dragstart'); fire(slot, 'dragenter'); fire(slot, 'dragover');
fire(slot, 'drop'); fire(item, 'dragend');
"""


@pytest.mark.sqlite_only  # the page does not depend on the backend: tests/console covers both
def test_dragging_an_appointment_onto_another_slot_moves_it(client, load, signed_in):
    load(tenant_fixture("acme", booking=BOOKING))
    monday = next_monday()
    tuesday = (datetime.fromisoformat(monday) + timedelta(days=1)).date().isoformat()
    booked = client.post(BASE, json={**NEW, "scheduled_date": monday}, headers=API).get_json()["id"]
    console = signed_in(TOKEN)
    console.open(f"/console/calendar?week={monday}")
    console.wait_for_heading("Calendar")
    console.click(f"#appointment-{booked} details.move summary")  # the form without drag
    assert console.driver.find_element(By.ID, f"move-time-{booked}").get_attribute("value") == "10:00"
    console.screenshot("calendar-move-form")
    found = axe_violations(console.driver)
    assert not found, f"calendar with a move form open: {found}"
    assert remaining(console, monday, "10:00") == "1" and remaining(console, tuesday, "11:00") == "2"
    console.driver.execute_script(DRAG, f"appointment-{booked}", f"slot-{tuesday}-1100")
    wait_until(lambda: remaining(console, tuesday, "11:00") == "1", timeout=20)
    assert "Moved." in console.text("main .notice")
    moved = Appointment.get_by_id(booked)
    assert (str(moved.scheduled_date), moved.scheduled_time) == (tuesday, "11:00")
    assert [e.data["scheduled_time"] for e in Event.select() if e.type == "appointment.updated"] == ["11:00"]
    assert remaining(console, monday, "10:00") == "2"
    assert "11:00" in console.text(f"#day-{tuesday} #appointment-{booked}")
    console.screenshot("calendar-moved")
    found = axe_violations(console.driver)
    assert not found, f"calendar after a move: {found}"


def _status(console, appointment_id: int) -> str:
    try:
        return console.text(f"#appointment-{appointment_id} .appointment-status")
    except Exception:  # mid-navigation
        return ""


def test_a_message_sent_on_a_ticket_shows_in_its_thread_once_the_consumer_sent_it(load, signed_in, consumer):
    load(shop_fixture())
    console = signed_in(TOKEN)
    console.click("nav a[href='/console/conversations']")
    console.wait_for_heading("Conversations")
    console.screenshot("conversations-empty")
    console.driver.find_element(By.ID, "new-sms-ticket").send_keys("1001")
    console.driver.find_element(By.ID, "new-sms-to").send_keys(ANN_PHONE)
    console.driver.find_element(By.ID, "new-sms-content").send_keys("Your phone is ready.")
    console.click("#new-send-sms button.send")
    console.wait_for_heading("Conversation")
    message = Message.get(Message.direction == "outbound")
    assert "Your phone is ready." in console.text(f"#message-{message.id}")
    wait_until(lambda: "logged" in _delivery(console, message.id), timeout=60)  # the page looks again
    assert Message.get_by_id(message.id).delivery_status == "logged"
    assert f"to {ANN_PHONE}" in console.text(f"#message-{message.id}")
    console.screenshot("conversation-sent")
    console.driver.set_window_size(390, 844)
    assert console.driver.execute_script("return document.documentElement.scrollWidth") <= 390
    console.screenshot("conversation-phone")
    console.driver.set_window_size(1280, 900)
    console.click("main p a[href='/console/conversations']")
    console.wait_for_heading("Conversations")
    assert "Ann Lee" in console.text("main table")
    console.screenshot("conversations")


def _delivery(console, message_id: int) -> str:
    try:
        return console.text(f"#message-{message_id} .delivery-status")
    except Exception:  # mid-reload
        return ""

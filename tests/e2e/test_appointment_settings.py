"""The appointment settings page in real headless Chromium: the owner saves a reminder rule and
quiet hours and sees them on the page again, a bad time is shown beside its field, and axe-core
finds nothing serious. SQLite only (tests/console/test_settings_pages.py covers both backends)."""

import copy

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from shop.models import Tenant
from tests.helpers import tenant_fixture
from tests.helpers.appointments import BOOKING
from tests.helpers.axe import axe_violations
from tests.helpers.console import OWNER, teammates
from tests.helpers.processes import wait_until

pytestmark = [pytest.mark.sqlite_only, pytest.mark.usefixtures("cheap_password_hashes")]
PAGE = "/console/settings/appointments"


@pytest.fixture
def shop(load):
    load(tenant_fixture("acme", users=teammates(OWNER), booking=copy.deepcopy(BOOKING)))


def fill(console, field_id: str, value: str) -> None:
    box = console.driver.find_element(By.ID, field_id)
    box.clear()
    box.send_keys(value)


def assert_accessible(console, page: str) -> None:
    found = axe_violations(console.driver)
    assert not found, f"{page}: {found}"


def test_the_owner_saves_a_reminder_rule_and_sees_it(shop, console):
    console.sign_in_as(*OWNER[:2])
    console.open(PAGE)
    console.wait_for_heading("Appointment settings")
    assert_accessible(console, "settings (nothing set)")
    fill(console, "rule1_amount", "3")
    Select(console.driver.find_element(By.ID, "rule1_unit")).select_by_visible_text("hours")
    Select(console.driver.find_element(By.ID, "rule1_channels")).select_by_visible_text("Email only")
    fill(console, "template_reminder", "{shop}: see you at {time}, {first_name}!")
    console.click("#message_confirmation")
    console.click("#save-settings")
    wait_until(lambda: "done=saved" in console.driver.current_url, timeout=20)
    console.wait_for_heading("Appointment settings")
    stored = Tenant.get_by_id("acme").booking
    assert stored["reminders"] == [{"before_minutes": 180, "channels": ["email"]}]
    assert stored["customer_messages"]["confirmation"] is True and stored["hours"] == BOOKING["hours"]
    assert console.driver.find_element(By.ID, "rule1_amount").get_attribute("value") == "3"
    chosen = Select(console.driver.find_element(By.ID, "rule1_channels")).first_selected_option
    assert chosen.text == "Email only"
    assert "Acme: see you at 10:00 AM, Ann!" in console.text("#preview-reminder")
    assert console.driver.find_element(By.ID, "message_confirmation").is_selected()
    assert_accessible(console, "settings (saved)")
    console.screenshot("console-settings-appointments")
    # a bad amount: refused beside its field, the saved rule unchanged
    fill(console, "rule1_amount", "15")
    Select(console.driver.find_element(By.ID, "rule1_unit")).select_by_visible_text("days")
    console.click("#save-settings")
    wait_until(lambda: console.driver.find_elements(By.ID, "rule1_amount-error"), timeout=20)
    assert "14 days" in console.text("#rule1_amount-error")
    assert Tenant.get_by_id("acme").booking["reminders"] == stored["reminders"]
    assert_accessible(console, "settings (refused)")

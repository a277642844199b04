"""The owners' API keys page in real headless Chromium: the owner makes a key (its token shown once
works in the API), revokes it after the confirm step, and the API refuses it at once; axe-core finds
nothing serious on the keys and teammates pages. SQLite only (tests/console/test_owner_pages.py
covers both backends)."""

import pytest
import requests
from selenium.webdriver.common.by import By

from shop.models import ApiKey
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.axe import axe_violations
from tests.helpers.console import OWNER, STAFF, teammates
from tests.helpers.processes import wait_until

pytestmark = [pytest.mark.sqlite_only, pytest.mark.usefixtures("cheap_password_hashes")]


@pytest.fixture
def shop(load):
    load(tenant_fixture("acme", users=teammates(OWNER, STAFF)))


def assert_accessible(console, page: str) -> None:
    found = axe_violations(console.driver)
    assert not found, f"{page}: {found}"


def me(console, token: str) -> int:
    return requests.get(
        f"{console.server.url}/api/v1/me", headers=auth_headers(token), timeout=10
    ).status_code


def test_the_owner_makes_a_key_and_revokes_it(shop, console):
    console.sign_in_as(*OWNER[:2])
    console.open("/console/teammates")
    console.wait_for_heading("Teammates")
    assert_accessible(console, "teammates")
    console.screenshot("console-teammates")
    console.driver.find_element(By.CSS_SELECTOR, 'nav a[href="/console/keys"]').click()
    console.wait_for_heading("API keys")
    assert_accessible(console, "keys")
    console.click("#mode-live")
    console.click('input[id="scope-tickets.read"]')
    console.click('input[id="scope-customers.read"]')
    console.click("#make-key-submit")
    console.wait_for_heading("New API key")
    assert_accessible(console, "key made")
    console.screenshot("console-key-made")
    assert "Copy the token now" in console.text(".notice")
    token = console.text("#token")
    made = ApiKey.get(ApiKey.id != "key_acme")
    assert token.startswith("sk_live_") and made.scopes == ["customers.read", "tickets.read"]
    assert me(console, token) == 200
    console.open("/console/keys")
    console.wait_for_heading("API keys")
    assert token not in console.driver.page_source
    console.click(f"#key-{made.id} a.revoke")
    console.wait_for_heading(f"Revoke the key {made.id}")
    assert_accessible(console, "revoke confirm")
    assert not ApiKey.get_by_id(made.id).revoked
    console.click("#revoke-key-submit")
    wait_until(lambda: "done=revoked" in console.driver.current_url, timeout=20)
    console.wait_for_heading("API keys")
    assert_accessible(console, "keys after revoke")
    console.screenshot("console-keys")
    assert ApiKey.get_by_id(made.id).revoked
    assert me(console, token) == 401

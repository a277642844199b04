"""The console in real headless Chromium against the service under gunicorn with a real consumer."""

from tests.helpers import tenant_fixture

TOKEN = "sk_test_acme_token_0001"


def test_signing_in_with_a_key_opens_the_overview_with_its_charts(load, signed_in):
    load(tenant_fixture("acme"))
    console = signed_in(TOKEN)
    assert console.heading() == "Overview"
    assert "Acme" in console.text("header .who")
    assert console.driver.find_elements("css selector", "svg.chart rect.bar")
    cookie = console.driver.get_cookie("shop_console")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert TOKEN not in str(console.driver.get_cookies())
    console.screenshot("overview")

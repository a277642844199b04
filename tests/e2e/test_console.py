"""The console in real headless Chromium against the service under gunicorn with a real consumer and a
real HTTPS receiver on loopback; screenshots of each page go to the test's output folder."""

import pytest
from selenium.webdriver.common.keys import Keys

from shop import clock
from shop.domain.usage import DAY_MS
from shop.models import Notification, UsageLog, WebhookDelivery
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.processes import wait_until
from tests.helpers.webhook_receiver import WebhookReceiver
from tests.helpers.webhooks import create

TOKEN = "sk_test_acme_token_0001"
API = auth_headers(TOKEN)
TRUSTED = "127.0.0.0/8,::1/128"


def consumer_env(receiver) -> dict:
    return {
        "SHOP_WEBHOOK_CA_BUNDLE": receiver.ca_path,
        "SHOP_WEBHOOK_TRUSTED_NETWORKS": TRUSTED,
        "SHOP_WEBHOOK_RETRY_DELAYS": "0,0.2,0.2,0.2,0.2,0.2,0.2,0.2",
        "SHOP_WEBHOOK_TIMEOUT": "2",
    }


def test_signing_in_with_a_key_opens_the_overview_with_its_charts(load, signed_in):
    load(tenant_fixture("acme", notifications=[{"id": 50, "scope": "global", "type": "x", "message": "Hi"}]))
    log_a_week_of_requests("key_acme")
    console = signed_in(TOKEN)
    assert console.heading() == "Overview"
    assert "Acme" in console.text("header .who")
    assert len(console.driver.find_elements("css selector", "svg.chart")) == 3
    days = console.driver.find_elements("css selector", "main table tbody tr")
    assert len(days) == 7 and days[0].find_element("css selector", "td").text == "60"
    cookie = console.driver.get_cookie("shop_console")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert TOKEN not in str(console.driver.get_cookies())
    console.screenshot("overview")
    # keyboard order: the skip link first, then the pages, then sign-out, then the page itself
    body = console.driver.find_element("css selector", "body")
    body.send_keys(Keys.TAB)
    order = [console.driver.switch_to.active_element.text]
    for _ in range(4):
        console.driver.switch_to.active_element.send_keys(Keys.TAB)
        order.append(console.driver.switch_to.active_element.text)
    assert order == ["Skip to content", "Repair-Shop console", "Overview", "Board", "Calendar"]
    console.driver.set_window_size(390, 844)  # a phone: the nav wraps, nothing scrolls sideways
    width = console.driver.execute_script("return document.documentElement.scrollWidth")
    assert width <= 390
    console.screenshot("overview-phone")


def test_a_failing_delivery_s_attempts_then_redeliver_until_delivered(
    app, client, load, signed_in, start_consumer, tmp_path, monkeypatch
):
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", TRUSTED)
    load(tenant_fixture("acme"))
    with WebhookReceiver(tmp_path, default=(500, {"error": "down"})) as receiver:
        sub = create(client, API, url=receiver.hook_url(), events=["*"]).get_json()["id"]
        start_consumer(**consumer_env(receiver))
        delivery = client.post(f"/api/v1/webhooks/{sub}/ping", headers=API).get_json()["id"]
        wait_until(lambda: WebhookDelivery.get_by_id(delivery).status == "dead", 60)
        console = signed_in(TOKEN)
        console.click("nav a[href='/console/webhooks']")
        console.wait_for_heading("Webhooks")
        console.screenshot("webhooks")
        console.click(f"a[href='/console/webhooks/{sub}']")
        console.wait_for_heading("Subscription")
        console.screenshot("subscription")
        console.click(f"a[href='/console/webhooks/{sub}/deliveries/{delivery}']")
        console.wait_for_heading("Delivery")
        statuses = console.driver.find_elements("css selector", ".attempt .response-status")
        assert [s.text for s in statuses] == ["500"] * 8
        assert "dead" in console.text("#delivery-status")
        console.screenshot("delivery-dead")
        receiver.default = (200, {"ok": True})
        console.click("#redeliver")
        wait_until(lambda: "delivered" in _status_text(console), 60)  # the page looks again by itself
    assert WebhookDelivery.get_by_id(delivery).status == "delivered"
    assert "Queued again" in console.text("main") or "delivered" in console.text("#delivery-status")
    assert console.driver.find_elements("css selector", ".attempt .response-status")[-1].text == "200"
    console.screenshot("delivery-delivered")


def log_a_week_of_requests(key_id: str) -> None:
    """Usage rows for the last six days, as the request pipeline writes them (the chart's data)."""
    now = clock.epoch_ms()
    rows = []
    for day in range(1, 7):
        for n in range(10 * day):
            status = 500 if (n + day) % 23 == 0 else 404 if n % (day + 3) == 0 else 200
            created = now - day * DAY_MS + n * 1000
            rows.append(
                {
                    "tenant_id": "acme",
                    "api_key_id": key_id,
                    "method": "GET",
                    "path": "/api/v1/me",
                    "status": status,
                    "duration_ms": 5 + (n * 37) % (20 * day),
                    "created_ms": created,
                }
            )
    UsageLog.insert_many(rows).execute()


def _status_text(console) -> str:
    try:
        return console.text("#delivery-status")
    except Exception:  # mid-reload
        return ""


def test_archiving_a_notification_lowers_the_unread_count(load, signed_in):
    notes = [
        {"id": 50, "scope": "global", "type": "new_ticket", "message": "New ticket 1001"},
        {"id": 51, "scope": "global", "type": "mention", "message": "You were mentioned"},
    ]
    load(tenant_fixture("acme", notifications=notes))
    console = signed_in(TOKEN)
    console.click("nav a[href='/console/inbox']")
    console.wait_for_heading("Inbox 2 unread")
    console.screenshot("inbox")
    console.click("#notification-50 button.archive")
    console.wait_for_heading("Inbox 1 unread")
    assert "New ticket 1001" not in console.text("main")
    assert Notification.get_by_id(50).archived
    console.screenshot("inbox-after-archive")


def test_a_form_posted_without_its_csrf_token_is_refused(load, signed_in):
    load(tenant_fixture("acme", notifications=[{"id": 50, "scope": "global", "type": "x", "message": "Hi"}]))
    console = signed_in(TOKEN)
    console.open("/console/inbox")
    console.driver.execute_script(
        "document.querySelectorAll('#notification-50 input[name=csrf_token]').forEach(e => e.remove())"
    )
    console.click("#notification-50 button.archive")
    console.wait_for_heading("Not allowed")
    assert "not sent from the console" in console.text("main")
    assert not Notification.get_by_id(50).archived
    console.screenshot("csrf-refused")


@pytest.mark.parametrize("path", ["/console/webhooks", "/console/webhooks/whsub_anything"])
def test_a_key_without_webhooks_read_sees_no_webhooks_page(load, signed_in, path):
    load(tenant_fixture("acme", scopes=["notifications.read"]))
    console = signed_in(TOKEN)
    links = [a.text for a in console.driver.find_elements("css selector", "header nav a")]
    assert links == ["Overview", "Inbox"]
    console.open(path)
    console.wait_for_heading("Not allowed")
    assert "webhooks.read" in console.text("main")
    console.screenshot("no-webhooks")

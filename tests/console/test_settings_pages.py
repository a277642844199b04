"""The console's appointment settings page: owners save reminder rules, quiet hours, customer
messages and texts (the fixture's rules, one transaction); new and upcoming bookings follow them;
bad fields are shown beside themselves with nothing written; staff, keys and forged forms refused."""

import copy

import pytest

from shop.models import AppointmentReminder, Tenant
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.appointments import BASE, BOOKING, NEW, set_clock
from tests.helpers.console import OWNER, STAFF, assert_page, csrf_token, page_text, sign_in, sign_in_as
from tests.helpers.console import teammates as users

pytestmark = pytest.mark.usefixtures("cheap_password_hashes")

PAGE = "/console/settings/appointments"
TOKEN = "sk_test_acme_token_0001"
# acme's booking with reminders of its own (a day and two hours before, quiet hours at night)
ACME_BOOKING = {
    **copy.deepcopy(BOOKING),
    "reminders": [{"before_minutes": 1440, "channels": ["sms", "email"]}],
    "quiet_hours": ["21:00", "08:00"],
}
GLOBEX_BOOKING = {**copy.deepcopy(BOOKING), "reminders": [{"before_minutes": 60, "channels": ["email"]}]}
# a whole valid form: one rule of 2 hours by email then SMS, quiet 22:00-07:00, confirmations on
GOOD = {
    "rule1_amount": "2",
    "rule1_unit": "hours",
    "rule1_channels": "email,sms",
    "quiet_start": "22:00",
    "quiet_end": "07:00",
    "message_confirmation": "on",
    "template_reminder": "{shop}: see you {date} at {time}, {first_name}.",
}


@pytest.fixture
def shop(load):
    set_clock("2026-11-25T12:00:00")
    load(
        tenant_fixture("acme", users=users(OWNER, STAFF), booking=ACME_BOOKING),
        tenant_fixture("globex", booking=GLOBEX_BOOKING),
    )


def owner(client) -> str:
    """Sign the owner in; the page's CSRF token."""
    assert sign_in_as(client, *OWNER[:2]).status_code == 303
    return csrf_token(page_text(client.get(PAGE)))


def post(client, csrf, form):
    return client.post(PAGE, data={"csrf_token": csrf, **form})


def booking(tenant_id: str) -> dict:
    return Tenant.get_by_id(tenant_id).booking


def book(client, **fields):
    response = client.post(BASE, json={**NEW, **fields}, headers=auth_headers(TOKEN))
    assert response.status_code == 201, response.get_data(as_text=True)
    return int(response.get_json()["id"])


def pending(appointment_id: int) -> list[tuple]:
    rows = AppointmentReminder.select().where(
        (AppointmentReminder.appointment == appointment_id) & (AppointmentReminder.kind == "reminder")
    )
    return sorted((r.before_minutes, r.status, r.reason, list(r.channels)) for r in rows)


def test_the_page_shows_the_saved_settings_in_the_shop_s_time_zone(client, shop):
    owner(client)
    html = page_text(client.get(PAGE))
    assert "<h1>Appointment settings</h1>" in html and ">America/New_York<" in html
    assert 'href="/console/calendar/feeds"' in html and f'href="{PAGE}"' in html  # feeds link, nav entry
    assert 'name="rule1_amount" value="1"' in html and '<option value="days" selected>' in html
    assert 'name="quiet_start" value="21:00"' in html and 'name="quiet_end" value="08:00"' in html
    assert "Hi Ann Lee, a reminder from Acme" in html  # the default text's preview


def test_a_save_is_read_back_and_leaves_the_other_booking_keys_alone(client, shop):
    csrf = owner(client)
    before = booking("acme")
    response = post(client, csrf, GOOD)
    assert response.status_code == 303 and response.headers["Location"].endswith(f"{PAGE}?done=saved")
    stored = booking("acme")
    assert stored["reminders"] == [{"before_minutes": 120, "channels": ["email", "sms"]}]
    assert stored["quiet_hours"] == ["22:00", "07:00"]
    assert stored["customer_messages"] == {"confirmation": True, "reschedule": False, "cancellation": False}
    assert stored["templates"] == {"reminder": GOOD["template_reminder"]}
    keep = set(before) - {"reminders", "quiet_hours", "customer_messages", "templates"}
    assert keep and {k: stored[k] for k in keep} == {k: before[k] for k in keep}
    html = page_text(client.get(f"{PAGE}?done=saved"))
    assert "Saved." in html and 'name="rule1_amount" value="2"' in html
    assert '<option value="email,sms" selected>' in html and 'id="message_confirmation" name' in html
    assert "Acme: see you" in html and ", Ann." in html  # the saved text's preview, {first_name} filled
    assert booking("globex") == Tenant.get_by_id("globex").booking and booking("globex")["reminders"] == [
        {"before_minutes": 60, "channels": ["email"]}
    ]


def test_a_new_booking_follows_the_saved_rules(client, shop):
    post(
        client,
        owner(client),
        {**GOOD, "rule2_amount": "30", "rule2_unit": "minutes", "rule2_channels": "sms"},
    )
    appointment_id = book(client)  # 2026-12-01 10:00 New York
    assert pending(appointment_id) == [
        (30, "pending", None, ["sms"]),
        (120, "pending", None, ["email", "sms"]),
    ]
    rows = {r.before_minutes: r for r in AppointmentReminder.select()}
    assert rows[120].scheduled_for.isoformat() == "2026-12-01T13:00:00"  # 08:00 New York, after 07:00


def test_changed_rules_re_plan_the_pending_reminders_of_upcoming_appointments(client, shop):
    csrf = owner(client)
    upcoming, past = book(client), book(client, scheduled_date="2026-11-25", scheduled_time="09:00")
    assert pending(upcoming) == [(1440, "pending", None, ["sms", "email"])]
    set_clock("2026-11-25T14:30:00")  # the second one has begun: its rows stay as they are
    response = post(client, csrf, GOOD)
    assert response.headers["Location"].endswith("done=replanned")
    assert pending(upcoming) == [
        (120, "pending", None, ["email", "sms"]),
        (1440, "cancelled", "settings_changed", ["sms", "email"]),
    ]
    assert pending(past) == [(1440, "skipped", "too_late", ["sms", "email"])]
    assert "now follow these rules" in page_text(client.get(f"{PAGE}?done=replanned"))
    # saved again unchanged: nothing is re-planned, the pending row is kept as it is
    kept = AppointmentReminder.get(AppointmentReminder.status == "pending").id
    assert post(client, csrf, GOOD).headers["Location"].endswith("done=saved")
    assert AppointmentReminder.get(AppointmentReminder.status == "pending").id == kept


def test_an_empty_form_turns_everything_off(client, shop):
    csrf = owner(client)
    appointment_id = book(client)
    assert post(client, csrf, {}).status_code == 303
    stored = booking("acme")
    assert stored["reminders"] == [] and stored["quiet_hours"] is None and stored["templates"] == {}
    assert pending(appointment_id) == [(1440, "cancelled", "settings_changed", ["sms", "email"])]


TOO_LONG = "x" * 1001
BAD = [
    pytest.param({"rule1_amount": "two"}, "rule1_amount", id="a rule's time that is not a number"),
    pytest.param({"rule1_amount": "-5"}, "rule1_amount", id="a negative rule time"),
    pytest.param({"rule1_amount": "1.5"}, "rule1_amount", id="a fractional rule time"),
    pytest.param({"rule1_amount": "9" * 12}, "rule1_amount", id="a huge rule time"),
    pytest.param({"rule1_amount": "9" * 13}, "rule1_amount", id="a rule time too long to read"),
    pytest.param({"rule1_amount": "3", "rule1_unit": "minutes"}, "rule1_amount", id="less than 5 minutes"),
    pytest.param({"rule1_amount": "15", "rule1_unit": "days"}, "rule1_amount", id="more than 14 days"),
    pytest.param({"rule1_amount": ["1", "2"]}, "rule1_amount", id="an array for a rule time"),
    pytest.param({"rule1_amount": "1\x00"}, "rule1_amount", id="a NUL in a rule time"),
    pytest.param({"rule1_amount": "١٢"}, "rule1_amount", id="non-ASCII digits"),
    pytest.param({"rule1_unit": "weeks"}, "rule1_unit", id="an unknown unit"),
    pytest.param({"rule1_channels": "fax"}, "rule1_channels", id="an unknown channel"),
    pytest.param({"rule1_channels": "sms,sms"}, "rule1_channels", id="a channel twice"),
    pytest.param({"rule1_channels": ["sms", "email"]}, "rule1_channels", id="an array for the channels"),
    pytest.param({"rule2_amount": "2", "rule2_unit": "hours"}, "reminders", id="two rules at the same time"),
    pytest.param({"quiet_start": "25:00"}, "quiet_start", id="quiet hours at 25:00"),
    pytest.param({"quiet_start": "9pm"}, "quiet_start", id="quiet hours in words"),
    pytest.param({"quiet_start": "24:00"}, "quiet_start", id="quiet hours at 24:00"),
    pytest.param({"quiet_start": "07:00"}, "quiet_start", id="quiet hours that start when they end"),
    pytest.param({"quiet_start": "21:00\x01"}, "quiet_start", id="a control character in quiet hours"),
    pytest.param({"quiet_end": ""}, "quiet_end", id="quiet hours without an end"),
    pytest.param({"quiet_start": "", "quiet_end": "07:00"}, "quiet_start", id="quiet hours without a start"),
    pytest.param({"quiet_start": ["22:00", "23:00"]}, "quiet_start", id="an array for the quiet start"),
    pytest.param(
        {"message_confirmation": "yes"}, "message_confirmation", id="a checkbox with a strange value"
    ),
    pytest.param({"message_cancellation": ["on", "on"]}, "message_cancellation", id="a checkbox sent twice"),
    pytest.param({"template_reminder": TOO_LONG}, "template_reminder", id="an over-long text"),
    pytest.param({"template_reminder": "Hi {phone}"}, "template_reminder", id="an unknown placeholder"),
    pytest.param({"template_reminder": "Hi {date:%Y}"}, "template_reminder", id="a format spec"),
    pytest.param({"template_reminder": "Hi {"}, "template_reminder", id="an unclosed brace"),
    pytest.param({"template_reminder": "Hi\x00 there"}, "template_reminder", id="a NUL in a text"),
    pytest.param(
        {"template_reminder": "Hi\x07 there"}, "template_reminder", id="a control character in a text"
    ),
    pytest.param({"template_cancellation": ["a", "b"]}, "template_cancellation", id="an array for a text"),
]


@pytest.mark.parametrize(("change", "field"), BAD)
def test_a_bad_field_is_shown_beside_itself_and_nothing_is_written(client, shop, change, field):
    csrf = owner(client)
    before = booking("acme")
    response = post(client, csrf, {**GOOD, **change})
    assert_page(response, 400)
    html = page_text(response)
    assert f'id="{field}-error" role="alert"' in html or (
        field == "reminders" and 'id="reminders-error"' in html
    ), html[:3000]
    assert "Nothing was saved" in html
    assert booking("acme") == before


def test_every_bad_field_is_shown_at_once(client, shop):
    csrf = owner(client)
    response = post(
        client, csrf, {**GOOD, "rule1_channels": "fax", "quiet_start": "9pm", "template_reminder": "{x}"}
    )
    assert_page(response, 400)
    html = page_text(response)
    for field in ("rule1_channels", "quiet_start", "template_reminder"):
        assert f'id="{field}-error"' in html, field
    assert 'value="9pm"' in html  # what was typed is kept


def test_staff_and_api_keys_are_refused_the_page(client, shop):
    assert sign_in_as(client, *STAFF[:2]).status_code == 303
    html = page_text(client.get("/console/"))
    assert f'href="{PAGE}"' not in html
    assert_page(client.get(PAGE), 403)
    before = booking("acme")
    assert_page(post(client, csrf_token(html), GOOD), 403)
    assert booking("acme") == before
    client.post("/console/sign-out", data={"csrf_token": csrf_token(html)})
    csrf = sign_in(client, TOKEN)  # an API key has no role: not an owner
    assert_page(client.get(PAGE), 403)
    assert_page(post(client, csrf, GOOD), 403)
    assert booking("acme") == before


def test_a_form_without_its_csrf_token_is_refused(client, shop):
    owner(client)
    before = booking("acme")
    assert_page(client.post(PAGE, data=GOOD), 403)
    assert_page(client.post(PAGE, data={**GOOD, "csrf_token": "forged"}), 403)
    assert booking("acme") == before


def test_a_shop_without_booking_settings_cannot_save_them(client, load):
    load(tenant_fixture("acme", users=users(OWNER)))
    csrf = owner(client)
    assert 'id="no-booking"' in page_text(client.get(PAGE))
    assert_page(post(client, csrf, GOOD), 422)
    assert booking("acme") is None

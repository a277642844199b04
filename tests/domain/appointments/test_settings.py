"""Saving the appointment settings (shop.domain.appointments.settings): the fixture's rules, the
other booking keys untouched, and what a change does to the reminders of upcoming appointments."""

import pytest

from shop.domain import actor
from shop.domain.appointments import settings
from shop.models import AppointmentReminder, Message, Tenant
from shop.platform.errors import ApiError
from tests.domain.appointments.test_reminders import book, run_consumer, shop, states
from tests.helpers.appointments import set_clock

OWNER = actor.teammate("olga@acme.test", "dashboard")
DAY_BEFORE = {"before_minutes": 1440, "channels": ["sms", "email"]}


def test_a_save_re_plans_only_what_changed_and_never_reminds_twice(client, load):
    shop(load)
    set_clock("2026-11-20T12:00:00")
    soon = book(client, "2026-11-21", "10:00")  # 15:00 UTC: reminders 24 h and 2 h before
    later = book(client, "2026-12-01", "10:00")
    set_clock("2026-11-20T15:00:00")
    assert run_consumer() == ["sent"]  # the day-before reminder of `soon`
    saved = settings.update_appointment_settings(
        "acme", {"reminders": [DAY_BEFORE], "quiet_hours": ["21:00", "09:30"]}, OWNER
    )
    assert saved.replanned == 2 and saved.settings["quiet_hours"] == ["21:00", "09:30"]
    assert [s[1:] for s in states(client, soon)] == [
        (1440, "2026-11-20T15:00:00.000Z", "sent", None),  # already sent: left alone, not sent again
        (120, "2026-11-21T13:00:00.000Z", "cancelled", "settings_changed"),
    ]
    assert [s[1:] for s in states(client, later)] == [
        (1440, "2026-11-30T15:00:00.000Z", "pending", None),  # the same plan: the row is kept
        (120, "2026-12-01T13:00:00.000Z", "cancelled", "settings_changed"),
    ]
    kept = AppointmentReminder.get(AppointmentReminder.status == "pending")
    assert kept.created_at.isoformat() < "2026-11-20T12:01"  # made at booking, not at the save
    assert Message.select().count() == 1
    set_clock("2026-11-21T13:00:00")
    assert run_consumer() == []  # the cancelled 2-hour reminder never goes out


def test_quiet_hours_moved_over_a_pending_reminder_move_it(client, load):
    shop(load, reminders=[DAY_BEFORE])
    set_clock("2026-11-20T12:00:00")
    later = book(client, "2026-12-01", "07:30")  # due 07:30 New York the day before
    settings.update_appointment_settings(
        "acme", {"reminders": [DAY_BEFORE], "quiet_hours": ["21:00", "08:00"]}, OWNER
    )
    assert [s[1:] for s in states(client, later)] == [
        (1440, "2026-11-30T01:59:00.000Z", "pending", None),  # 20:59 New York the evening before
        (1440, "2026-11-30T12:30:00.000Z", "cancelled", "settings_changed"),
    ]


def test_a_reminder_whose_rule_is_gone_is_not_sent_by_the_consumer(client, load):
    shop(load)
    set_clock("2026-11-20T12:00:00")
    book(client, "2026-12-01", "10:00")
    # a settings change that did not see this booking (it committed while the change ran)
    booking = Tenant.get_by_id("acme").booking
    Tenant.update(booking={**booking, "reminders": []}).execute()
    set_clock("2026-11-30T15:00:00")
    assert run_consumer() == ["cancelled"]
    row = AppointmentReminder.get(AppointmentReminder.before_minutes == 1440)
    assert (row.status, row.reason) == ("cancelled", "settings_changed") and Message.select().count() == 0


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"reminders": [DAY_BEFORE] * 2}, id="two rules at the same time"),
        pytest.param({"reminders": [{"before_minutes": 60, "channels": ["sms"]}] * 6}, id="six rules"),
        pytest.param({"reminders": {"before_minutes": 60}}, id="an object for the rules"),
        pytest.param(
            {"reminders": [{"before_minutes": "60", "channels": ["sms"]}]}, id="a string for minutes"
        ),
        pytest.param({"reminders": [{"before_minutes": 2**63, "channels": ["sms"]}]}, id="a huge number"),
        pytest.param({"reminders": [{"before_minutes": 60, "channels": []}]}, id="no channel"),
        pytest.param({"quiet_hours": "21:00-08:00"}, id="quiet hours as one string"),
        pytest.param({"customer_messages": {"confirmation": 1}}, id="a number for a switch"),
        pytest.param({"templates": {"reminder": ["Hi"]}}, id="an array for a text"),
        pytest.param({"templates": {"invoice": "Hi"}}, id="an unknown text"),
        pytest.param({"hours": {}}, id="another booking key"),
    ],
)
def test_bad_settings_are_refused_with_every_field_named_and_nothing_written(load, body):
    shop(load)
    before = Tenant.get_by_id("acme").booking
    with pytest.raises(ApiError) as refused:
        settings.update_appointment_settings("acme", body, OWNER)
    assert refused.value.status == 400 and refused.value.code == "invalid_field"
    assert refused.value.param in refused.value.details["fields"]
    assert Tenant.get_by_id("acme").booking == before


def test_the_rules_are_the_fixture_s(load):
    shop(load)
    with pytest.raises(ApiError) as refused:
        settings.update_appointment_settings("acme", {"templates": {"reminder": "{shop} {phone}"}}, OWNER)
    assert "Unknown placeholder {phone}" in refused.value.message

"""Bad input on the reminders route and on every new booking setting (issue 25): the spec's error
body, never a 500, nothing written."""

import pytest

from shop.domain.fixtures import FixtureError
from shop.models import Appointment, AppointmentReminder, Tenant
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.appointments import set_clock

HEADERS = auth_headers("sk_test_acme_token_0001")
RULE = {"before_minutes": 1440, "channels": ["sms", "email"]}
BOOKING = {"enabled": True, "capacity": 5, "hours": {"wed": [["09:00", "17:00"]]}, "reminders": [RULE]}
APPOINTMENT = {
    "id": 200,
    "customer_name": "Ann Lee",
    "customer_phone": "+15555550100",
    "scheduled_date": "2026-12-02",
    "scheduled_time": "10:00",
}


@pytest.fixture
def booked(load):
    set_clock("2026-11-20T12:00:00")
    load(
        tenant_fixture("acme", booking=BOOKING, appointments=[APPOINTMENT]),
        tenant_fixture("other", booking=BOOKING, appointments=[{**APPOINTMENT, "id": 300}]),
        tenant_fixture("reader", scopes=["messages.read"]),
    )


@pytest.mark.parametrize(
    "path, status, code, param",
    [
        ("/abc/reminders", 400, "invalid_id", "id"),
        ("/0/reminders", 400, "invalid_id", "id"),
        ("/-1/reminders", 400, "invalid_id", "id"),
        ("/1.5/reminders", 400, "invalid_id", "id"),
        ("/2147483648/reminders", 400, "invalid_id", "id"),
        (f"/{'9' * 400}/reminders", 400, "invalid_id", "id"),
        ("/999/reminders", 404, "not_found", "id"),
        ("/300/reminders", 404, "not_found", "id"),  # another tenant's: just as missing
        ("/200/reminders?limit=0", 400, "invalid_query", "limit"),
        ("/200/reminders?limit=101", 400, "invalid_query", "limit"),
        ("/200/reminders?limit=abc", 400, "invalid_query", "limit"),
        ("/200/reminders?limit=99999999999999999999", 400, "invalid_query", "limit"),
        ("/200/reminders?limit[]=5", 400, "invalid_query", "limit"),
        ("/200/reminders?cursor=garbage", 400, "invalid_cursor", "cursor"),
        ("/200/reminders?cursor=%00", 400, "invalid_cursor", "cursor"),
    ],
)
def test_the_reminders_route_refuses_bad_input(client, booked, path, status, code, param):
    response = client.get(f"/api/v1/appointments{path}", headers=HEADERS)
    assert_error(response, status, code, param)


def test_the_reminders_route_needs_appointments_read(client, booked):
    assert_error(
        client.get("/api/v1/appointments/200/reminders", headers=auth_headers("sk_test_reader_token_0001")),
        403,
        "insufficient_scope",
    )
    assert client.get("/api/v1/appointments/200/reminders").status_code == 401


def test_the_reminders_list_pages_with_a_cursor(client, booked):
    first = client.get("/api/v1/appointments/200/reminders?limit=1", headers=HEADERS).get_json()
    assert first["total"] == 1 and len(first["data"]) == 1 and first["has_more"] is False
    row = first["data"][0]
    assert row["object"] == "appointment_reminder" and row["id"].startswith("rem_")
    assert row["appointment_id"] == 200 and row["kind"] == "reminder" and row["before_minutes"] == 1440
    assert set(row) == {
        "object",
        "id",
        "appointment_id",
        "kind",
        "before_minutes",
        "scheduled_for",
        "status",
        "reason",
        "channel",
        "message_id",
        "created_at",
        "updated_at",
    }


def _booking(**changes):
    return {"booking": {**BOOKING, **changes}}


BAD_SETTINGS = [
    ("reminders not a list", _booking(reminders={"before_minutes": 60}), "reminders"),
    ("reminders a string", _booking(reminders="1440"), "reminders"),
    ("six rules", _booking(reminders=[{**RULE, "before_minutes": 10 + i} for i in range(6)]), "reminders"),
    ("two rules at one time", _booking(reminders=[RULE, RULE]), "reminders"),
    ("before_minutes missing", _booking(reminders=[{"channels": ["sms"]}]), "reminders[0].before_minutes"),
    ("before_minutes 4", _booking(reminders=[{**RULE, "before_minutes": 4}]), "reminders[0].before_minutes"),
    (
        "before_minutes too big",
        _booking(reminders=[{**RULE, "before_minutes": 20161}]),
        "reminders[0].before_minutes",
    ),
    (
        "before_minutes huge",
        _booking(reminders=[{**RULE, "before_minutes": 10**30}]),
        "reminders[0].before_minutes",
    ),
    (
        "before_minutes text",
        _booking(reminders=[{**RULE, "before_minutes": "60"}]),
        "reminders[0].before_minutes",
    ),
    (
        "before_minutes float",
        _booking(reminders=[{**RULE, "before_minutes": 60.5}]),
        "reminders[0].before_minutes",
    ),
    (
        "before_minutes bool",
        _booking(reminders=[{**RULE, "before_minutes": True}]),
        "reminders[0].before_minutes",
    ),
    (
        "before_minutes list",
        _booking(reminders=[{**RULE, "before_minutes": [60]}]),
        "reminders[0].before_minutes",
    ),
    ("channels missing", _booking(reminders=[{"before_minutes": 60}]), "reminders[0].channels"),
    ("channels empty", _booking(reminders=[{**RULE, "channels": []}]), "reminders[0].channels"),
    ("channels a string", _booking(reminders=[{**RULE, "channels": "sms"}]), "reminders[0].channels"),
    ("unknown channel", _booking(reminders=[{**RULE, "channels": ["fax"]}]), "reminders[0].channels[0]"),
    ("channel twice", _booking(reminders=[{**RULE, "channels": ["sms", "sms"]}]), "reminders[0].channels"),
    ("rule unknown key", _booking(reminders=[{**RULE, "at": "09:00"}]), "reminders[0].at"),
    ("quiet hours one time", _booking(quiet_hours=["21:00"]), "quiet_hours"),
    ("quiet hours equal", _booking(quiet_hours=["21:00", "21:00"]), "quiet_hours"),
    ("quiet hours bad time", _booking(quiet_hours=["25:00", "08:00"]), "quiet_hours"),
    ("quiet hours 24:00", _booking(quiet_hours=["21:00", "24:00"]), "quiet_hours"),
    ("quiet hours a string", _booking(quiet_hours="21:00-08:00"), "quiet_hours"),
    ("quiet hours numbers", _booking(quiet_hours=[2100, 800]), "quiet_hours"),
    ("quiet hours NUL", _booking(quiet_hours=["21:00\x00", "08:00"]), "quiet_hours"),
    ("customer_messages a list", _booking(customer_messages=["confirmation"]), "customer_messages"),
    (
        "customer_messages text",
        _booking(customer_messages={"confirmation": "yes"}),
        "customer_messages.confirmation",
    ),
    (
        "customer_messages unknown",
        _booking(customer_messages={"reminder": True}),
        "customer_messages.reminder",
    ),
    ("template unknown key", _booking(templates={"thanks": "Hi"}), "templates.thanks"),
    ("template unknown placeholder", _booking(templates={"reminder": "Hi {name}"}), "templates.reminder"),
    ("template positional", _booking(templates={"reminder": "Hi {}"}), "templates.reminder"),
    ("template attribute", _booking(templates={"reminder": "{shop.__class__}"}), "templates.reminder"),
    ("template format spec", _booking(templates={"reminder": "{date:%Y}"}), "templates.reminder"),
    ("template conversion", _booking(templates={"reminder": "{date!r}"}), "templates.reminder"),
    ("template open brace", _booking(templates={"reminder": "Hi {shop"}), "templates.reminder"),
    ("template too long", _booking(templates={"reminder": "x" * 1001}), "templates.reminder"),
    ("template NUL", _booking(templates={"reminder": "Hi\x00"}), "templates.reminder"),
    ("template control", _booking(templates={"reminder": "Hi\x07"}), "templates.reminder"),
    ("template blank", _booking(templates={"reminder": "   "}), "templates.reminder"),
    ("template number", _booking(templates={"reminder": 5}), "templates.reminder"),
    ("template null", _booking(templates={"reminder": None}), "templates.reminder"),
]


@pytest.mark.parametrize("fields, path", [b[1:] for b in BAD_SETTINGS], ids=[b[0] for b in BAD_SETTINGS])
def test_bad_settings_are_named_and_nothing_is_loaded(load, fields, path):
    with pytest.raises(FixtureError) as caught:
        load(tenant_fixture("acme", appointments=[APPOINTMENT], **fields))
    assert caught.value.path == f"tenants[0].booking.{path}"
    assert Tenant.select().count() == 0 and Appointment.select().count() == 0
    assert AppointmentReminder.select().count() == 0


def test_good_settings_load_and_absent_ones_are_off(load):
    load(
        tenant_fixture(
            "acme",
            booking={
                **BOOKING,
                "quiet_hours": ["21:00", "08:00"],
                "customer_messages": {"confirmation": True},
                "templates": {
                    "reminder": "{shop}: {customer_name}, {date} {time}, {service} with {tech}. {{ok}}"
                },
            },
        ),
        tenant_fixture("plain", booking={"enabled": True}),
    )
    booking = Tenant.get_by_id("acme").booking
    assert booking["customer_messages"] == {"confirmation": True, "reschedule": False, "cancellation": False}
    plain = Tenant.get_by_id("plain").booking
    assert (plain["reminders"], plain["quiet_hours"], plain["templates"]) == ([], None, {})

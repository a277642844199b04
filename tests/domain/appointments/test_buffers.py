"""Service buffers: a booking keeps minutes free around itself in slots, capacity and tech calendars."""

import pytest

from shop.models import Appointment
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.appointments import BASE, BOOKING, HOLDS, NEW, SLOTS, set_clock

TUESDAY = "2026-12-01"  # 09:00-12:00 and 13:00-17:00
SERVICES = [
    {"id": "clean", "name": "Repair and clean up", "minutes": 60, "buffer_after_minutes": 30},
    {"id": "prep", "name": "Prepared job", "minutes": 30, "buffer_before_minutes": 30},
    {"id": "long-prep", "name": "Long set-up", "minutes": 30, "buffer_before_minutes": 60},
    {"id": "quick", "name": "Quick check", "minutes": 30},
]
BUFFERED = {**BOOKING, "capacity": 1, "services": SERVICES}


def booked(time, service=None, tech=None, day=TUESDAY, minutes=None):
    length = minutes or next((s["minutes"] for s in SERVICES if s["id"] == service), 30)
    return {
        "customer_name": "C",
        "customer_phone": "1",
        "scheduled_date": day,
        "scheduled_time": time,
        "duration_minutes": length,
        "service_id": service,
        "tech_id": tech,
    }


@pytest.fixture
def shop(load):
    def _shop(appointments=(), booking=BUFFERED):
        set_clock("2026-11-25T12:00:00")
        load(tenant_fixture("acme", booking=booking, appointments=list(appointments)))
        return auth_headers("sk_test_acme_token_0001")

    return _shop


def left(client, headers, query, day=TUESDAY) -> dict:
    response = client.get(f"{SLOTS}?date={day}&{query}", headers=headers)
    assert response.status_code == 200, response.get_json()
    return {slot["time"]: slot["remaining"] for slot in response.get_json()["data"]}


def test_a_booking_s_after_buffer_keeps_the_next_slot_free(client, shop):
    slots = left(client, shop([booked("10:00", "clean")]), "")
    # 10:00-11:00 is the job, 11:00-11:30 its clean-up
    assert (slots["09:30"], slots["10:00"], slots["10:30"], slots["11:00"], slots["11:30"]) == (1, 0, 0, 0, 1)


def test_the_same_booking_without_its_service_blocks_only_its_own_hour(client, shop):
    slots = left(client, shop([booked("10:00", minutes=60)]), "")
    assert (slots["10:30"], slots["11:00"]) == (0, 1)


def test_a_service_s_own_before_buffer_needs_room_before_it(client, shop):
    slots = left(client, shop([booked("10:00")]), "service_id=prep")
    # prep at 10:30 would set up during the 10:00 booking; at 11:00 it sets up from 10:30
    assert (slots["10:00"], slots["10:30"], slots["11:00"]) == (0, 0, 1)


def test_buffers_may_fall_outside_opening_hours_at_both_ends_of_the_day(client, shop):
    headers = shop()
    # prep sets up from 08:30, before opening; clean tidies up until 17:30, after closing
    assert left(client, headers, "service_id=prep")["09:00"] == 1
    clean = left(client, headers, "service_id=clean")
    assert clean["16:00"] == 1 and clean["16:30"] == 0  # the job itself must end by closing


def test_a_buffer_at_the_end_of_one_day_does_not_reach_into_the_next(client, shop):
    headers = shop([booked("16:00", "clean", day="2026-11-30")])  # Monday, tidying up until 17:30
    assert left(client, headers, "service_id=prep", day=TUESDAY)["09:00"] == 1


def test_buffers_on_both_sides_of_the_lunch_break_meet_inside_it(client, shop):
    # long-prep at 13:00 sets up from 12:00; clean at 11:00 tidies up 12:00-12:30: they collide
    headers = shop([booked("13:00", "long-prep")])
    clean = left(client, headers, "service_id=clean")
    assert clean["10:00"] == 1 and clean["11:00"] == 0
    assert left(client, headers, "")["11:30"] == 1  # a plain slot ending at noon leaves the set-up alone


def test_buffers_that_only_touch_across_the_break_both_fit(client, shop):
    headers = shop([booked("13:00", "prep")])  # sets up 12:30-13:00
    assert left(client, headers, "service_id=clean")["11:00"] == 1  # tidies up 12:00-12:30


def test_a_create_that_would_sit_in_a_buffer_is_slot_unavailable(client, shop):
    headers = shop([booked("10:00", "clean")])
    response = client.post(BASE, json={**NEW, "scheduled_time": "11:00"}, headers=headers)
    error = assert_error(response, 409, "slot_unavailable", "scheduled_time")
    assert error["details"]["next_available"][0] == {"date": TUESDAY, "time": "11:30"}
    assert client.post(BASE, json={**NEW, "scheduled_time": "11:30"}, headers=headers).status_code == 201


def test_buffers_count_against_capacity_not_beyond_it(client, shop):
    headers = shop([booked("10:00", "clean")], booking={**BUFFERED, "capacity": 2})
    slots = left(client, headers, "")
    assert (slots["10:30"], slots["11:00"], slots["11:30"]) == (1, 1, 2)


def test_a_tech_s_buffers_block_that_tech_only(client, shop):
    headers = shop([booked("10:00", "clean", tech="bo")], booking={**BUFFERED, "capacity": 2})
    assert left(client, headers, "tech_id=bo")["11:00"] == 0
    assert left(client, headers, "")["11:00"] == 1
    refused = client.post(HOLDS, json={"date": TUESDAY, "time": "11:00", "tech_id": "bo"}, headers=headers)
    reasons = assert_error(refused, 409, "slot_unavailable", "time")["details"]["reasons"]
    assert reasons == [{"code": "buffer", "booked": 1, "held": 0, "capacity": 1, "tech_id": "bo"}]


def test_a_booking_made_with_a_hold_keeps_the_service_s_buffers(client, shop):
    headers = shop()
    held = client.post(HOLDS, json={"date": TUESDAY, "time": "14:00", "service_id": "clean"}, headers=headers)
    assert held.get_json()["buffer_after_minutes"] == 30
    assert left(client, headers, "")["15:00"] == 0  # the hold keeps its buffer too
    body = {**NEW, "scheduled_date": TUESDAY, "scheduled_time": "14:00", "hold_id": held.get_json()["id"]}
    appointment = client.post(BASE, json=body, headers=headers).get_json()
    row = Appointment.get_by_id(appointment["id"])
    assert (row.service_id, row.buffer_before_minutes, row.buffer_after_minutes) == ("clean", 0, 30)
    assert left(client, headers, "")["15:00"] == 0 and left(client, headers, "")["15:30"] == 1


def test_rescheduling_a_buffered_booking_keeps_its_buffers(client, shop):
    headers = shop([booked("10:00", "clean"), booked("14:15")])
    moved = client.patch(
        f"{BASE}/{Appointment.get(Appointment.service_id == 'clean').id}",
        json={"scheduled_time": "13:00"},
        headers=headers,
    )
    assert_error(moved, 409, "slot_unavailable", "scheduled_time")  # 13:00-14:00, tidy-up until 14:30
    fits = client.patch(
        f"{BASE}/{Appointment.get(Appointment.service_id == 'clean').id}",
        json={"scheduled_time": "15:00"},
        headers=headers,
    )
    assert fits.status_code == 200


def test_an_in_app_booking_of_a_service_keeps_its_buffers(client, runner, shop):
    shop()
    data = (
        '{"customer_name": "Ann", "customer_phone": "1", "scheduled_date": "2026-12-01", '
        '"scheduled_time": "10:00", "duration_minutes": 60, "service_id": "clean"}'
    )
    result = runner.invoke(
        args=["shop", "activity", "appointment.created", "--tenant", "acme", "--data", data]
    )
    assert result.exit_code == 0, result.output
    assert Appointment.get().buffer_after_minutes == 30


@pytest.mark.parametrize(
    "service_id",
    ["no-such", "", "s" * 41, ["clean"]],
    ids=["an unknown service", "an empty one", "an over-long one", "a list"],
)
def test_an_in_app_booking_of_a_bad_service_books_nothing(runner, shop, service_id):
    import json

    shop()
    data = json.dumps(
        {
            "customer_name": "Ann",
            "customer_phone": "1",
            "scheduled_date": TUESDAY,
            "scheduled_time": "10:00",
            "service_id": service_id,
        }
    )
    result = runner.invoke(
        args=["shop", "activity", "appointment.created", "--tenant", "acme", "--data", data]
    )
    assert result.exit_code == 1 and "service" in result.output, result.output
    assert Appointment.select().count() == 0


def test_fixture_buffers_are_checked_and_default_to_none(load):
    from shop.domain.fixture_rows import FixtureError

    with pytest.raises(FixtureError, match="buffer_after_minutes"):
        load(
            tenant_fixture(
                "acme",
                booking={**BOOKING, "services": [{"id": "s", "minutes": 30, "buffer_after_minutes": -1}]},
            )
        )
    with pytest.raises(FixtureError, match="hold_minutes"):
        load(tenant_fixture("acme", booking={**BOOKING, "hold_minutes": 61}))
    with pytest.raises(FixtureError, match="service_id"):
        load(tenant_fixture("acme", booking=BOOKING, appointments=[booked("10:00", "no-such")]))
    load(tenant_fixture("acme", booking=BOOKING, appointments=[booked("10:00", "quick-check")]))
    row = Appointment.get()
    assert (row.service_id, row.buffer_before_minutes, row.buffer_after_minutes) == ("quick-check", 0, 0)

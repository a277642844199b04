"""A taken slot says where to go: details.next_available on 409 slot_unavailable."""

import pytest

from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.appointments import BASE, BOOKING, HOLDS, NEW, set_clock

ACME = auth_headers("sk_test_acme_token_0001")


def booked(day, time, minutes=30, tech=None):
    return {
        "customer_name": "C",
        "customer_phone": "1",
        "scheduled_date": day,
        "scheduled_time": time,
        "duration_minutes": minutes,
        "tech_id": tech,
    }


@pytest.fixture
def shop(load):
    """One place per slot; the clock at Wed 2026-11-25 07:00 in New York."""

    def _shop(appointments=(), **settings):
        set_clock("2026-11-25T12:00:00")
        load(
            tenant_fixture(
                "acme", booking={**BOOKING, "capacity": 1, **settings}, appointments=list(appointments)
            )
        )
        return ACME

    return _shop


def refused(client, body, path=BASE):
    response = client.post(path, json=body, headers=ACME)
    param = "time" if path == HOLDS else "scheduled_time"
    return assert_error(response, 409, "slot_unavailable", param)["details"]["next_available"]


def at(day, *times):
    return [{"date": day, "time": time} for time in times]


def test_later_the_same_day_first(client, shop):
    shop([booked("2026-12-01", "10:00"), booked("2026-12-01", "10:30")])
    assert refused(client, {**NEW, "scheduled_time": "10:00"}) == at("2026-12-01", "11:00", "11:30", "13:00")


def test_across_a_closed_day(client, shop):
    # Tuesday's last slot is taken; Wednesday has no hours: Thursday morning is next
    shop([booked("2026-12-01", "16:30")])
    assert refused(client, {**NEW, "scheduled_time": "16:30"}) == at("2026-12-03", "09:00", "09:30", "10:00")


def test_across_a_closed_date(client, shop):
    shop([booked("2026-12-24", "16:30")])  # Thursday; Friday 25th is closed, the weekend is Saturday 10-14
    assert refused(client, {**NEW, "scheduled_date": "2026-12-24", "scheduled_time": "16:30"}) == at(
        "2026-12-26", "10:00", "10:30", "11:00"
    )


def test_at_the_window_s_end_only_what_is_left_inside_it(client, shop):
    # 61 days ahead of Wed 2026-11-25 is Mon 2027-01-25, the window's last day
    shop(
        [booked("2027-01-25", "15:00"), booked("2027-01-25", "16:00"), booked("2027-01-25", "16:30")],
        max_days_ahead=61,
    )
    assert refused(client, {**NEW, "scheduled_date": "2027-01-25", "scheduled_time": "15:00"}) == at(
        "2027-01-25", "15:30"
    )
    assert refused(client, {**NEW, "scheduled_date": "2027-01-25", "scheduled_time": "16:00"}) == []


def test_for_the_same_service_and_tech(client, shop):
    # a 90-minute hold for bo: bo is busy at 13:00, and the service must fit before closing
    shop([booked("2026-12-01", "14:00", tech="bo"), booked("2026-12-01", "15:30", tech="ann")], capacity=2)
    body = {"date": "2026-12-01", "time": "13:00", "service_id": "screen-repair", "tech_id": "bo"}
    assert refused(client, body, HOLDS) == at("2026-12-01", "14:30", "15:00", "15:30")


def test_a_refused_reschedule_says_where_to_go_too(client, shop):
    shop([booked("2026-12-01", "10:00"), {**booked("2026-12-01", "15:00"), "id": 77}])
    response = client.patch(f"{BASE}/77", json={"scheduled_time": "10:00"}, headers=ACME)
    error = assert_error(response, 409, "slot_unavailable", "scheduled_time")
    assert error["details"]["next_available"][0] == {"date": "2026-12-01", "time": "10:30"}

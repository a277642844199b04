"""Bookable slots on fixed dates: hours, spans, capacity, techs, the window, notice, closed days, DST."""

import pytest

from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.appointments import BOOKING, set_clock

URL = "/api/v1/appointments/slots"


def booked(day, time, minutes=30, tech=None, status="scheduled"):
    return {
        "customer_name": "C",
        "customer_phone": "1",
        "scheduled_date": day,
        "scheduled_time": time,
        "duration_minutes": minutes,
        "tech_id": tech,
        "status": status,
    }


@pytest.fixture
def shop(load):
    """Acme with the DESIGN.md booking settings; the clock at Wed 2026-11-25 07:00 in New York."""

    def _shop(appointments=(), booking=BOOKING, timezone="America/New_York", now="2026-11-25T12:00:00"):
        set_clock(now)
        load(tenant_fixture("acme", booking=booking, timezone=timezone, appointments=list(appointments)))
        return auth_headers("sk_test_acme_token_0001")

    return _shop


def get_slots(client, headers, query):
    response = client.get(f"{URL}?{query}", headers=headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def free(envelope) -> dict:
    return {slot["time"]: slot["remaining"] for slot in envelope["data"]}


def test_two_intervals_in_a_day_give_slots_in_both(client, shop):
    body = get_slots(client, shop(), "date=2026-12-01")  # a Tuesday: 09-12 and 13-17
    times = [slot["time"] for slot in body["data"]]
    assert times == [
        "09:00",
        "09:30",
        "10:00",
        "10:30",
        "11:00",
        "11:30",
        "13:00",
        "13:30",
        "14:00",
        "14:30",
        "15:00",
        "15:30",
        "16:00",
        "16:30",
    ]
    assert all(
        slot == {"object": "appointment_slot", "time": slot["time"], "available": True, "remaining": 2}
        for slot in body["data"]
    )
    assert body["closed"] is False and body["has_more"] is False and body["next_cursor"] is None
    assert not {"disabled", "too_far_ahead", "unknown_tech", "tech_off", "service", "tech"} & set(body)


def test_a_service_span_must_fit_before_the_break_and_before_closing(client, shop):
    body = get_slots(client, shop(), "date=2026-12-01&service_id=screen-repair")  # 90 minutes
    available = {t for t, left in free(body).items() if left}
    assert available == {
        "09:00",
        "09:30",
        "10:00",
        "10:30",
        "13:00",
        "13:30",
        "14:00",
        "14:30",
        "15:00",
        "15:30",
    }
    assert free(body)["11:00"] == 0 and free(body)["16:00"] == 0
    assert body["service"] == {"id": "screen-repair", "minutes": 90}


def test_capacity_two_is_filled_by_overlapping_bookings(client, shop):
    headers = shop(
        [
            booked("2026-12-01", "10:00", 60),
            booked("2026-12-01", "10:30"),
            booked("2026-12-01", "10:30", status="cancelled"),
        ]
    )
    slots = free(get_slots(client, headers, "date=2026-12-01"))
    assert (slots["09:30"], slots["10:00"], slots["10:30"], slots["11:00"]) == (2, 1, 0, 2)
    # a 90-minute service must find a place in every slot it covers
    spans = free(get_slots(client, headers, "date=2026-12-01&service_id=screen-repair"))
    assert (spans["09:00"], spans["09:30"], spans["10:00"], spans["11:00"]) == (1, 0, 0, 0)


def test_a_tech_works_their_own_hours_and_is_busy_with_their_own_bookings(client, shop):
    headers = shop([booked("2026-11-30", "10:00", 60, tech="alex"), booked("2026-11-30", "11:00", tech="bo")])
    body = get_slots(client, headers, "date=2026-11-30&tech_id=alex")  # Monday; alex 09-13
    slots = free(body)
    assert list(slots) == ["09:00", "09:30", "10:00", "10:30", "11:00", "11:30", "12:00", "12:30"]
    assert (slots["09:30"], slots["10:00"], slots["10:30"], slots["11:00"]) == (1, 0, 0, 1)
    assert body["tech"] == {"id": "alex"}
    # bo has no own hours: the shop's, with his own booking at 11:00
    bo = free(get_slots(client, headers, "date=2026-11-30&tech_id=bo"))
    assert len(bo) == 16 and bo["11:00"] == 0 and bo["10:00"] == 1


def test_unknown_tech_and_tech_off(client, shop):
    headers = shop()
    unknown = get_slots(client, headers, "date=2026-11-30&tech_id=zed")
    assert unknown["data"] == [] and unknown["unknown_tech"] is True and unknown["tech"] == {"id": "zed"}
    off = get_slots(client, headers, "date=2026-12-01&tech_id=alex")  # alex works Mondays only
    assert off["data"] == [] and off["tech_off"] is True and off["closed"] is False


def test_today_after_closing_has_nothing_left(client, shop):
    headers = shop(now="2026-11-30T23:00:00")  # Monday 18:00 in New York
    body = get_slots(client, headers, "date=2026-11-30")
    assert body["data"] and all(not slot["available"] and slot["remaining"] == 0 for slot in body["data"])


def test_minimum_notice_and_past_times_today(client, shop):
    headers = shop(now="2026-11-30T14:59:50")  # Monday 09:59:50 in New York, 60 minutes notice
    slots = free(get_slots(client, headers, "date=2026-11-30"))
    assert (slots["09:00"], slots["10:00"], slots["10:30"], slots["11:00"]) == (0, 0, 0, 2)


def test_a_date_past_the_booking_window(client, shop):
    headers = shop()  # today 2026-11-25, 60 days ahead: 2027-01-24 is the last bookable day
    assert free(get_slots(client, headers, "date=2027-01-22"))  # a Friday inside the window
    body = get_slots(client, headers, "date=2027-01-25")  # a Monday beyond it
    assert body["data"] == [] and body["too_far_ahead"] is True and body["max_days"] == 60


def test_closed_date_and_closed_weekday(client, shop):
    headers = shop()
    christmas = get_slots(client, headers, "date=2026-12-25")
    assert christmas["closed"] is True and christmas["data"] == []
    wednesday = get_slots(client, headers, "date=2026-12-02")
    assert wednesday["closed"] is True and wednesday["data"] == []
    assert "too_far_ahead" not in wednesday


def test_online_booking_disabled(client, shop):
    body = get_slots(client, shop(booking={**BOOKING, "enabled": False}), "date=2026-12-01")
    assert body["data"] == [] and body["disabled"] is True and body["closed"] is False


def test_no_booking_settings_is_disabled(client, shop):
    body = get_slots(client, shop(booking=None), "date=2026-12-01&service_id=x&tech_id=y")
    assert body["disabled"] is True and body["service"] == {"id": "x", "minutes": None}


NIGHT_SHOP = {
    "enabled": True,
    "slot_minutes": 30,
    "capacity": 1,
    "max_days_ahead": 30,
    "min_notice_minutes": 60,
    "hours": {"sun": [["00:00", "06:00"]]},
}


def test_spring_forward_day_in_new_york(client, shop):
    # 2026-03-08: 02:00 EST jumps to 03:00 EDT; now is 01:29:50 EST (06:29:50 UTC), 60 minutes notice
    headers = shop(booking=NIGHT_SHOP, now="2026-03-08T06:29:50")
    slots = free(get_slots(client, headers, "date=2026-03-08"))
    assert "02:00" not in slots and "02:30" not in slots  # these wall times do not exist that day
    # 03:00 EDT is only 30 real minutes away; 03:30 EDT is just over 60 (wall clocks say 2 hours)
    assert (slots["01:30"], slots["03:00"], slots["03:30"], slots["05:30"]) == (0, 0, 1, 1)


def test_fall_back_day_in_new_york_lists_each_wall_time_once(client, shop):
    # 2026-11-01: 02:00 EDT falls back to 01:00 EST; now is 00:30 EDT (04:30 UTC)
    headers = shop(booking={**NIGHT_SHOP, "min_notice_minutes": 90}, now="2026-11-01T04:30:00")
    slots = free(get_slots(client, headers, "date=2026-11-01"))
    assert list(slots)[:6] == ["00:00", "00:30", "01:00", "01:30", "02:00", "02:30"]
    # 01:30 EDT (first occurrence) is 60 real minutes away: inside the 90-minute notice; 02:00 EST is 150
    assert (slots["01:30"], slots["02:00"]) == (0, 1)


def test_a_past_date_lists_its_slots_all_unavailable(client, shop):
    body = get_slots(client, shop(), "date=2026-11-23")  # last Monday
    assert len(body["data"]) == 16 and not any(slot["available"] for slot in body["data"])


@pytest.mark.parametrize(
    "query, flags",
    [
        ("date=2026-12-02&tech_id=zed", {"closed": True, "unknown_tech": True}),  # a closed Wednesday
        ("date=2027-01-27", {"closed": True, "too_far_ahead": True, "max_days": 60}),  # closed and too far
        (
            "date=2027-01-25&tech_id=zed",
            {"closed": False, "too_far_ahead": True, "max_days": 60, "unknown_tech": True},
        ),
        ("date=2026-12-02&tech_id=alex", {"closed": True, "tech_off": True}),  # alex works Mondays only
    ],
)
def test_every_flag_that_applies_on_an_empty_day_is_present(client, shop, query, flags):
    body = get_slots(client, shop(), query)
    present = {
        key: body[key]
        for key in ("closed", "disabled", "too_far_ahead", "max_days", "unknown_tech", "tech_off")
        if key in body
    }
    assert body["data"] == [] and present == flags


def test_no_booking_settings_know_no_tech(client, shop):
    body = get_slots(client, shop(booking=None), "date=2026-12-01&tech_id=y")
    assert body["disabled"] is True and body["unknown_tech"] is True and body["closed"] is False


def test_slots_are_paged_with_limit_and_cursor(client, shop):
    headers = shop()
    whole = [slot["time"] for slot in get_slots(client, headers, "date=2026-12-01")["data"]]
    times, cursor, pages = [], None, 0
    while True:
        body = get_slots(client, headers, "date=2026-12-01&limit=5" + (f"&cursor={cursor}" if cursor else ""))
        times += [slot["time"] for slot in body["data"]]
        pages += 1
        if not body["has_more"]:
            assert body["next_cursor"] is None
            break
        cursor = body["next_cursor"]
    assert times == whole and len(whole) == 14 and pages == 3


def test_a_day_of_quarter_hours_gives_25_slots_a_page_by_default(client, shop):
    body = get_slots(client, shop(booking={**BOOKING, "slot_minutes": 15}), "date=2026-12-01")
    assert len(body["data"]) == 25 and body["has_more"] is True and body["next_cursor"]


@pytest.mark.parametrize(
    "query, code",
    [
        ("date=2026-12-01&limit=0", "invalid_query"),
        ("date=2026-12-01&limit=101", "invalid_query"),
        ("date=2026-12-01&limit=abc", "invalid_query"),
        ("date=2026-12-01&cursor=abc", "invalid_cursor"),
    ],
)
def test_bad_limits_and_cursors_of_slots(client, shop, query, code):
    response = client.get(f"{URL}?{query}", headers=shop())
    assert response.status_code == 400 and response.get_json()["error"]["code"] == code


def test_a_slots_cursor_is_bound_to_its_day(client, shop):
    headers = shop()
    cursor = get_slots(client, headers, "date=2026-12-01&limit=5")["next_cursor"]
    response = client.get(f"{URL}?date=2026-11-30&limit=5&cursor={cursor}", headers=headers)
    assert response.status_code == 400 and response.get_json()["error"]["code"] == "invalid_cursor"

"""explain=true: every unavailable slot says why, each reason caused by a fixture of its own."""

import pytest

from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.appointments import BOOKING, HOLDS, SLOTS, reason_codes, set_clock, slot_at

ACME = auth_headers("sk_test_acme_token_0001")
SERVICES = [*BOOKING["services"], {"id": "clean", "name": "Clean", "minutes": 30, "buffer_after_minutes": 30}]


def booked(day, time, minutes=30, tech=None, service=None):
    return {
        "customer_name": "C",
        "customer_phone": "1",
        "scheduled_date": day,
        "scheduled_time": time,
        "duration_minutes": minutes,
        "tech_id": tech,
        "service_id": service,
    }


@pytest.fixture
def shop(load):
    """Acme (capacity 2, an hour's notice, 60 days ahead); the clock at Wed 2026-11-25 07:00 in New York."""

    def _shop(appointments=(), now="2026-11-25T12:00:00", **settings):
        set_clock(now)
        booking = {**BOOKING, "services": SERVICES, **settings}
        load(tenant_fixture("acme", booking=booking, appointments=list(appointments)))
        return ACME

    return _shop


def explain(client, day, query=""):
    response = client.get(f"{SLOTS}?date={day}&explain=true&limit=100{query}", headers=ACME)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def reasons_at(client, day, time, query=""):
    return slot_at(explain(client, day, query), time)["reasons"]


def test_closed_day_lists_the_week_s_grid_each_slot_closed(client, shop):
    shop()
    body = explain(client, "2026-12-02")  # a Wednesday: no hours
    assert body["closed"] is True
    times = [slot["time"] for slot in body["data"]]
    assert times[0] == "09:00" and times[-1] == "16:30"  # from the week's first opening to its last closing
    assert all(slot["reasons"] == [{"code": "closed_day"}] and not slot["available"] for slot in body["data"])
    assert client.get(f"{SLOTS}?date=2026-12-02", headers=ACME).get_json()["data"] == []


def test_closed_date(client, shop):
    shop()
    assert reasons_at(client, "2026-12-25", "10:00") == [{"code": "closed_date"}]  # a Friday


def test_outside_hours_before_opening_and_in_the_lunch_break(client, shop):
    shop()
    assert reasons_at(client, "2026-11-28", "09:00") == [{"code": "outside_hours"}]  # Saturday opens at 10
    assert reasons_at(client, "2026-12-01", "12:00") == [{"code": "outside_hours"}]  # Tuesday's break


def test_min_notice(client, shop):
    shop(now="2026-11-30T14:40:00")  # Monday 09:40 in New York, an hour's notice: from 10:40
    body = explain(client, "2026-11-30")
    assert slot_at(body, "10:30")["reasons"] == [{"code": "min_notice", "min_notice_minutes": 60}]
    assert slot_at(body, "11:00") == {
        "object": "appointment_slot",
        "time": "11:00",
        "available": True,
        "remaining": 2,
        "reasons": [],
    }


def test_too_far_ahead(client, shop):
    shop()
    body = explain(client, "2027-01-26")  # a Tuesday 62 days ahead
    assert body["too_far_ahead"] is True
    assert slot_at(body, "10:00")["reasons"] == [{"code": "too_far_ahead", "max_days": 60}]


def test_full_counts_the_bookings(client, shop):
    shop([booked("2026-12-01", "10:00"), booked("2026-12-01", "10:00", 60)])
    assert reasons_at(client, "2026-12-01", "10:00") == [
        {"code": "full", "booked": 2, "held": 0, "capacity": 2}
    ]
    assert reasons_at(client, "2026-12-01", "10:30") == []  # one place left


def test_held_when_a_hold_takes_the_last_place(client, shop):
    shop([booked("2026-12-01", "10:00")])
    assert client.post(HOLDS, json={"date": "2026-12-01", "time": "10:00"}, headers=ACME).status_code == 201
    assert reasons_at(client, "2026-12-01", "10:00") == [
        {"code": "held", "booked": 1, "held": 1, "capacity": 2}
    ]


def test_tech_off_outside_the_tech_s_hours_and_on_a_day_off(client, shop):
    shop()
    monday = explain(client, "2026-11-30", "&tech_id=alex")  # alex works 09:00-13:00 on Mondays
    assert slot_at(monday, "12:30")["reasons"] == []
    assert slot_at(monday, "13:00")["reasons"] == [{"code": "tech_off", "tech_id": "alex"}]
    tuesday = explain(client, "2026-12-01", "&tech_id=alex")
    assert tuesday["tech_off"] is True
    assert {tuple(reason_codes(slot)) for slot in tuesday["data"]} >= {("tech_off",)}
    assert slot_at(tuesday, "12:00")["reasons"] == [
        {"code": "outside_hours"},
        {"code": "tech_off", "tech_id": "alex"},
    ]


def test_tech_busy_counts_that_tech_s_bookings(client, shop):
    shop([booked("2026-12-01", "10:00", tech="bo")])
    assert reasons_at(client, "2026-12-01", "10:00", "&tech_id=bo") == [
        {"code": "tech_busy", "booked": 1, "held": 0, "capacity": 1, "tech_id": "bo"}
    ]
    assert reasons_at(client, "2026-12-01", "10:00") == []  # the shop has a second place


def test_span_crosses_break_and_a_span_past_closing(client, shop):
    shop()
    body = explain(client, "2026-12-01", "&service_id=screen-repair")  # 90 minutes
    assert slot_at(body, "11:00")["reasons"] == [{"code": "span_crosses_break"}]
    assert slot_at(body, "16:00")["reasons"] == [{"code": "outside_hours"}]
    assert slot_at(body, "10:30")["reasons"] == []


def test_buffer_when_only_the_buffers_do_not_fit(client, shop):
    shop([booked("2026-12-01", "10:00", service="clean")], capacity=1)  # tidies up 10:30-11:00
    body = explain(client, "2026-12-01")
    assert slot_at(body, "10:00")["reasons"] == [{"code": "full", "booked": 1, "held": 0, "capacity": 1}]
    assert slot_at(body, "10:30")["reasons"] == [{"code": "buffer", "booked": 1, "held": 0, "capacity": 1}]
    assert slot_at(body, "11:00")["reasons"] == []


def test_several_reasons_at_once(client, shop):
    shop(now="2026-12-01T15:00:00", closed_dates=["2026-12-08"])  # Tuesday 10:00 in New York
    assert reason_codes(slot_at(explain(client, "2026-12-01", "&service_id=screen-repair"), "09:00")) == [
        "min_notice"
    ]
    assert reason_codes(slot_at(explain(client, "2026-12-08"), "12:00")) == ["closed_date", "outside_hours"]


def test_explain_changes_no_answer_only_adds_the_reasons(client, shop):
    shop(
        [
            booked("2026-12-01", "10:00", service="clean", tech="bo"),
            booked("2026-12-01", "10:00"),
            booked("2026-12-01", "14:00", 90),
        ]
    )
    client.post(HOLDS, json={"date": "2026-12-01", "time": "15:00", "tech_id": "bo"}, headers=ACME)
    for query in ("", "&service_id=screen-repair", "&tech_id=bo", "&service_id=clean&tech_id=bo"):
        plain = client.get(f"{SLOTS}?date=2026-12-01&limit=100{query}", headers=ACME).get_json()
        explained = {slot["time"]: slot for slot in explain(client, "2026-12-01", query)["data"]}
        for slot in plain["data"]:
            extra = explained[slot["time"]]
            assert {k: v for k, v in extra.items() if k != "reasons"} == slot, (query, slot)
            assert (extra["reasons"] == []) == slot["available"], (query, extra)
            assert "reasons" not in slot
        assert set(plain) == set(explain(client, "2026-12-01", query))  # the same envelope keys


def test_explain_false_is_the_plain_list(client, shop):
    shop()
    plain = client.get(f"{SLOTS}?date=2026-12-01", headers=ACME).get_json()
    assert client.get(f"{SLOTS}?date=2026-12-01&explain=false", headers=ACME).get_json() == plain


def test_an_unknown_tech_stays_empty_with_its_flag(client, shop):
    shop()
    body = explain(client, "2026-12-01", "&tech_id=nobody")
    assert body["data"] == [] and body["unknown_tech"] is True


def test_disabled_booking_stays_empty_with_its_flag(client, shop):
    shop(enabled=False)
    body = explain(client, "2026-12-01")
    assert body["data"] == [] and body["disabled"] is True


def test_explain_on_dst_days(client, load):
    every_day = {day: [["00:00", "05:00"]] for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")}
    set_clock("2027-03-14T05:59:00")  # 00:59 EST; at 02:00 the clocks jump to 03:00 EDT (07:00 UTC)
    load(tenant_fixture("acme", booking={**BOOKING, "hours": every_day, "closed_dates": []}))
    body = explain(client, "2027-03-14")
    times = [slot["time"] for slot in body["data"]]
    assert "02:00" not in times and "02:30" not in times and "03:00" in times
    # an hour's notice from 05:59 UTC is 06:59 UTC: 01:30 EST (06:30 UTC) is too soon, 03:00 EDT is not
    assert slot_at(body, "01:30")["reasons"] == [{"code": "min_notice", "min_notice_minutes": 60}]
    assert slot_at(body, "03:00")["reasons"] == []
    # the fall-back day has 01:00 and 01:30 once each on the grid
    fall = explain(client, "2026-11-01")
    assert [slot["time"] for slot in fall["data"]].count("01:30") == 1

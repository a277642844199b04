"""Slot holds: a hold takes a place like a booking until it is used, released or expires."""

import pytest

from shop import clock
from shop.models import Appointment, Event, SlotHold
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.appointments import (
    BASE,
    BOOKING,
    HOLDS,
    NEW,
    SLOTS,
    hold_rows,
    set_clock,
    slot_at,
    snapshot,
)

ACME = auth_headers("sk_test_acme_token_0001")
GLOBEX = auth_headers("sk_test_globex_token_0001")
# capacity 1 so that one hold takes the slot; 15 minutes to hold it
ONE_PLACE = {**BOOKING, "capacity": 1, "hold_minutes": 15}
TUESDAY = "2026-12-01"


@pytest.fixture
def shop(load):
    """Acme and Globex with one place per slot; the clock at Wed 2026-11-25 07:00 in New York."""
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking=ONE_PLACE), tenant_fixture("globex", booking=ONE_PLACE))
    return ACME


def hold(client, headers=ACME, **fields):
    body = {"date": TUESDAY, "time": "10:00", **fields}
    response = client.post(HOLDS, json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def book(client, headers=ACME, **fields):
    return client.post(BASE, json={**NEW, "scheduled_date": TUESDAY, **fields}, headers=headers)


def remaining(client, time, headers=ACME, query=""):
    response = client.get(f"{SLOTS}?date={TUESDAY}{query}", headers=headers)
    return slot_at(response.get_json(), time)["remaining"]


def test_a_hold_answers_its_span_and_when_it_expires(client, shop):
    body = hold(client, service_id="screen-repair", tech_id="bo")
    assert body["object"] == "slot_hold" and body["id"].startswith("hold_") and len(body["id"]) == 29
    assert (body["date"], body["time"], body["duration_minutes"]) == (TUESDAY, "10:00", 90)
    assert (body["service_id"], body["tech_id"], body["status"]) == ("screen-repair", "bo", "active")
    assert body["expires_at"][:19] == "2026-11-25T12:15:00"  # hold_minutes 15
    assert body["buffer_before_minutes"] == 0 and body["appointment_id"] is None


def test_the_hold_time_defaults_to_ten_minutes(client, load):
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking=BOOKING))
    assert hold(client)["expires_at"][:19] == "2026-11-25T12:10:00"


def test_a_hold_blocks_a_booking_without_it_and_lets_the_holder_book(client, shop):
    held = hold(client)
    assert remaining(client, "10:00") == 0 and remaining(client, "10:30") == 1
    refused = book(client)
    error = assert_error(refused, 409, "slot_unavailable", "scheduled_time")
    assert error["details"]["next_available"][0] == {"date": TUESDAY, "time": "10:30"}
    assert Appointment.select().count() == 0
    booked = book(client, hold_id=held["id"])
    assert booked.status_code == 201, booked.get_json()
    appointment = booked.get_json()
    assert appointment["scheduled_time"] == "10:00" and appointment["duration_minutes"] == 30
    stored = SlotHold.get_by_id(held["id"])
    assert stored.status == "consumed" and stored.appointment_id == appointment["id"]
    assert remaining(client, "10:00") == 0  # the appointment holds it now, the hold no longer counts twice


def test_the_held_booking_takes_the_hold_s_service_tech_and_duration(client, shop):
    held = hold(client, service_id="screen-repair", tech_id="bo")
    appointment = book(client, hold_id=held["id"]).get_json()
    assert appointment["duration_minutes"] == 90 and appointment["tech_id"] == "bo"
    row = Appointment.get_by_id(appointment["id"])
    assert row.service_id == "screen-repair"
    assert set(appointment) == set(book_shape(client))  # the resource keeps its fields


def book_shape(client) -> dict:
    """An appointment booked without a hold, for comparing the resource's fields."""
    response = book(client, scheduled_time="15:00")
    assert response.status_code == 201
    return response.get_json()


def test_expiry_frees_the_place_with_nothing_run(client, shop):
    held = hold(client)
    assert book(client).status_code == 409
    clock.advance(15 * 60)  # exactly at expires_at the hold no longer counts
    assert remaining(client, "10:00") == 1
    assert book(client).status_code == 201
    assert SlotHold.get_by_id(held["id"]).status == "active"  # nothing wrote to it: it just stopped counting


def test_release_frees_the_place_at_once(client, shop):
    held = hold(client)
    response = client.delete(f"{HOLDS}/{held['id']}", headers=ACME)
    assert response.status_code == 200
    assert response.get_json()["status"] == "released" and response.get_json()["id"] == held["id"]
    assert remaining(client, "10:00") == 1
    again = client.delete(f"{HOLDS}/{held['id']}", headers=ACME)
    assert again.status_code == 200 and again.get_json()["status"] == "released"
    assert book(client).status_code == 201


def test_releasing_an_expired_hold_changes_nothing_and_a_consumed_one_is_409(client, shop):
    expired = hold(client)
    clock.advance(16 * 60)
    response = client.delete(f"{HOLDS}/{expired['id']}", headers=ACME)
    assert response.status_code == 200 and response.get_json()["status"] == "expired"
    assert SlotHold.get_by_id(expired["id"]).released_at is None
    used = hold(client, time="11:00")
    assert book(client, scheduled_time="11:00", hold_id=used["id"]).status_code == 201
    before = hold_rows()
    assert_error(client.delete(f"{HOLDS}/{used['id']}", headers=ACME), 409, "hold_consumed", "id")
    assert hold_rows() == before


def test_another_tenants_hold_is_not_found_for_release_or_booking(client, shop):
    theirs = hold(client, GLOBEX)
    before = (snapshot(), hold_rows())
    assert_error(client.delete(f"{HOLDS}/{theirs['id']}", headers=ACME), 404, "not_found", "id")
    assert_error(book(client, hold_id=theirs["id"]), 404, "not_found", "hold_id")
    assert (snapshot(), hold_rows()) == before
    # and it still holds Globex's place, not Acme's
    assert remaining(client, "10:00", GLOBEX) == 0 and remaining(client, "10:00") == 1


@pytest.mark.parametrize(
    ("state", "code"),
    [("expired", "hold_expired"), ("released", "hold_released"), ("consumed", "hold_consumed")],
    ids=["an expired hold", "a released hold", "a consumed hold"],
)
def test_a_hold_that_is_no_longer_live_cannot_book(client, shop, state, code):
    held = hold(client)
    if state == "expired":
        clock.advance(15 * 60 + 1)
    elif state == "released":
        client.delete(f"{HOLDS}/{held['id']}", headers=ACME)
    else:
        assert book(client, hold_id=held["id"]).status_code == 201
    before = (snapshot(), hold_rows())
    assert_error(book(client, hold_id=held["id"]), 409, code, "hold_id")
    assert (snapshot(), hold_rows()) == before


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"scheduled_date": "2026-12-03"}, "scheduled_date"),
        ({"scheduled_time": "10:30"}, "scheduled_time"),
        ({"duration_minutes": 60}, "duration_minutes"),
    ],
    ids=["another date", "another time", "another duration"],
)
def test_a_body_whose_span_differs_from_the_hold_is_refused(client, shop, change, param):
    held = hold(client, duration_minutes=30)
    before = (snapshot(), hold_rows())
    error = assert_error(book(client, hold_id=held["id"], **change), 409, "hold_mismatch", param)
    assert error["details"]["hold"] == {
        "scheduled_date": TUESDAY,
        "scheduled_time": "10:00",
        "duration_minutes": 30,
    }
    assert (snapshot(), hold_rows()) == before
    assert book(client, hold_id=held["id"], duration_minutes=30).status_code == 201  # the same span books


def test_holds_emit_no_events_and_never_appear_as_appointments(client, shop):
    held = hold(client)
    hold(client, time="11:00")
    client.delete(f"{HOLDS}/{held['id']}", headers=ACME)
    assert Event.select().count() == 0
    listed = client.get(BASE, headers=ACME).get_json()
    assert listed["data"] == [] and Appointment.select().count() == 0


def test_a_hold_online_booking_would_not_offer_is_refused_with_its_reasons(client, shop):
    before = hold_rows()
    hold(client, time="10:00")
    taken = client.post(HOLDS, json={"date": TUESDAY, "time": "10:00"}, headers=ACME)
    error = assert_error(taken, 409, "slot_unavailable", "time")
    assert error["details"]["reasons"] == [{"code": "held", "booked": 0, "held": 1, "capacity": 1}]
    assert error["details"]["next_available"] == [
        {"date": TUESDAY, "time": t} for t in ("10:30", "11:00", "11:30")
    ]
    lunch = client.post(HOLDS, json={"date": TUESDAY, "time": "12:00"}, headers=ACME)
    assert assert_error(lunch, 409, "slot_unavailable", "time")["details"]["reasons"] == [
        {"code": "outside_hours"}
    ]
    wednesday = client.post(HOLDS, json={"date": "2026-11-25", "time": "10:00"}, headers=ACME)
    assert {"code": "closed_day"} in assert_error(wednesday, 409, "slot_unavailable", "time")["details"][
        "reasons"
    ]
    assert len(hold_rows()) == len(before) + 1


def test_a_shop_without_online_booking_takes_no_holds(client, load):
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking={**BOOKING, "enabled": False}))
    error = assert_error(
        client.post(HOLDS, json={"date": TUESDAY, "time": "10:00"}, headers=ACME),
        409,
        "slot_unavailable",
        "date",
    )
    assert error["details"]["reasons"] == [{"code": "disabled"}] and hold_rows() == []


def test_the_idempotency_key_replays_the_first_hold(client, shop):
    headers = {**ACME, "Idempotency-Key": "hold-once-1"}
    first = client.post(HOLDS, json={"date": TUESDAY, "time": "10:00"}, headers=headers)
    second = client.post(HOLDS, json={"date": TUESDAY, "time": "10:00"}, headers=headers)
    assert first.status_code == second.status_code == 201
    assert first.get_json() == second.get_json() and len(hold_rows()) == 1
    other = client.post(HOLDS, json={"date": TUESDAY, "time": "11:00"}, headers=headers)
    assert_error(other, 409, "idempotency_key_reuse", "Idempotency-Key")
    assert len(hold_rows()) == 1


def test_a_held_booking_with_an_idempotency_key_is_booked_once(client, shop):
    held = hold(client)
    headers = {**ACME, "Idempotency-Key": "book-held-1"}
    body = {**NEW, "scheduled_date": TUESDAY, "hold_id": held["id"]}
    first = client.post(BASE, json=body, headers=headers)
    second = client.post(BASE, json=body, headers=headers)
    assert first.status_code == second.status_code == 201 and first.get_json() == second.get_json()
    assert Appointment.select().count() == 1
    assert Event.select().where(Event.type == "appointment.created").count() == 1


def test_a_hold_on_a_tech_keeps_that_tech_but_not_the_shop(client, load):
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking=BOOKING))  # capacity 2
    hold(client, tech_id="bo")
    assert remaining(client, "10:00") == 1  # one of two places
    assert remaining(client, "10:00", query="&tech_id=bo") == 0
    refused = client.post(HOLDS, json={"date": TUESDAY, "time": "10:00", "tech_id": "bo"}, headers=ACME)
    assert assert_error(refused, 409, "slot_unavailable", "time")["details"]["reasons"] == [
        {"code": "tech_busy", "booked": 0, "held": 1, "capacity": 1, "tech_id": "bo"}
    ]
    assert hold(client)["tech_id"] is None  # the shop's other place is still there


def test_dst_days_hold_in_wall_clock_time_and_expire_in_real_time(client, load):
    # Sunday 2026-11-01: New York falls back at 02:00, so 01:30 happens twice
    every_day = {day: [["00:00", "06:00"]] for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")}
    set_clock("2026-11-01T04:00:00")  # 00:00 EDT
    load(
        tenant_fixture(
            "acme",
            booking={
                **BOOKING,
                "hours": every_day,
                "min_notice_minutes": 0,
                "capacity": 1,
                "closed_dates": [],
            },
        )
    )
    held = hold(client, date="2026-11-01", time="01:30")
    assert held["expires_at"][:19] == "2026-11-01T04:10:00"
    slots = client.get(f"{SLOTS}?date=2026-11-01", headers=ACME).get_json()
    assert [s["time"] for s in slots["data"]].count("01:30") == 1 and slot_at(slots, "01:30")[
        "remaining"
    ] == 0
    # spring forward, Sunday 2027-03-14: 02:30 does not exist, so it cannot be held
    set_clock("2027-03-14T05:00:00")
    gap = client.post(HOLDS, json={"date": "2027-03-14", "time": "02:30"}, headers=ACME)
    assert_error(gap, 400, "invalid_time", "time")
    assert hold(client, date="2027-03-14", time="03:00")["expires_at"][:19] == "2027-03-14T05:10:00"

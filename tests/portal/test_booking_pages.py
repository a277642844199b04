"""The online booking page through the test client: choosing, holding, booking with source
online_booking, the bot guards, CSRF, bad input beside each field, and another shop's holds."""

import pytest

from shop.models import Appointment, Event, SlotHold
from tests.helpers import tenant_fixture
from tests.helpers.appointments import BOOKING, hold_rows, set_clock, snapshot
from tests.helpers.console import assert_page, page_text
from tests.helpers.portal import details_form, hidden_fields, hold

DAY, TIME = "2026-12-01", "10:00"
PERSON = {"customer_name": "Ann Lee", "customer_phone": "+15555550100", "customer_email": "ann@example.com"}


@pytest.fixture
def shop(app, load, monkeypatch):
    """acme taking online bookings and globex too, on Wednesday 2026-11-25 at noon UTC (7 am in New
    York); no minimum fill time unless a test sets one."""
    monkeypatch.setitem(app.config, "BOOKING_MIN_FILL_SECONDS", 0)
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking=BOOKING), tenant_fixture("globex", booking=BOOKING))


def held_location(client, tenant="acme", day=DAY, time=TIME, **fields) -> str:
    response = hold(client, tenant, day, time, **fields)
    assert response.status_code == 303, page_text(response)[:2000]
    return response.headers["Location"]


def book(client, location: str, **fields):
    return client.post(location, data={**details_form(client, location), **PERSON, **fields})


def test_the_page_lists_services_techs_days_and_places_left_on_the_shop_s_clock(client, shop):
    response = client.get(f"/book/acme?date={DAY}")
    html = page_text(response)
    assert response.status_code == 200
    assert "Screen repair (90 min)" in html and ">Alex</option>" in html
    assert "Tuesday 1 December" in html and "America/New_York" in html
    assert "Today, Wednesday 25 November" in html  # the shop's today, closed on Wednesdays
    assert 'class="day closed">Today, Wednesday 25 November <span class="tag">Closed</span>' in html
    assert 'value="10:00"' in html and "10:00 am" in html and "2 places left" in html
    assert "1:00 pm" in html
    assert response.headers["Content-Security-Policy"].startswith("default-src 'none'")
    assert response.headers["Cache-Control"] == "no-store"


def test_full_slots_look_full_and_closed_ones_closed(client, shop):
    for _ in range(2):
        location = held_location(client)
        assert book(client, location).status_code == 303
    html = page_text(client.get(f"/book/acme?date={DAY}"))
    ten = html.split('id="time-10:00"')[0].rsplit("<li", 1)[1] + html.split('id="time-10:00"')[1][:300]
    assert 'class="slot full"' in ten and "disabled" in ten and "Full" in ten
    lunch = html.split('id="time-12:00"')[0].rsplit("<li", 1)[1] + html.split('id="time-12:00"')[1][:300]
    assert 'class="slot closed"' in lunch and "Closed" in lunch
    closed_day = page_text(client.get("/book/acme?date=2026-12-02"))
    assert "The shop is closed on this day" in closed_day


def test_a_customer_holds_then_books_and_the_appointment_and_its_event_exist(client, shop):
    location = held_location(client, service="quick-check", tech="bo")
    page = page_text(client.get(location))
    assert "Tuesday 1 December at 10:00 am" in page and "Quick check" in page and "With Bo" in page
    assert "We are holding this time for you until" in page
    held = SlotHold.get()
    assert held.state == "active" and held.service_id == "quick-check"
    response = book(client, location, notes="Cracked screen")
    assert response.status_code == 303 and "/book/acme/booked/" in response.headers["Location"]
    booked = Appointment.get()
    assert (booked.source, booked.customer_name, booked.service_id, booked.tech_id) == (
        "online_booking",
        "Ann Lee",
        "quick-check",
        "bo",
    )
    assert SlotHold.get().status == "consumed"
    created = [e for e in Event.select() if e.type == "appointment.created"]
    assert len(created) == 1 and created[0].data["id"] == str(booked.id)
    assert created[0].data["source"] == "online_booking"  # what a subscriber reads (DESIGN.md)
    done = client.get(response.headers["Location"])
    assert done.status_code == 200 and "You are booked" in page_text(done)
    assert "Tuesday 1 December at 10:00 am" in page_text(done)


def test_choosing_another_time_releases_the_hold(client, shop):
    location = held_location(client)
    fields = hidden_fields(page_text(client.get(location)), "details-form")
    release = location.replace("/details/", "/release/")
    response = client.post(release, data={"csrf_token": fields["csrf_token"]})
    assert response.status_code == 303 and SlotHold.get().status == "released"
    again = client.get(location)
    assert again.status_code == 410 and "choose a time again" in page_text(again).lower()


@pytest.mark.parametrize(
    "tenant_fields",
    [
        pytest.param({"booking": {**BOOKING, "enabled": False}}, id="booking turned off"),
        pytest.param({}, id="no booking settings at all"),
        pytest.param({"booking": BOOKING, "suspended": True}, id="a suspended shop"),
    ],
)
def test_a_shop_that_takes_no_online_bookings_has_no_page(client, load, tenant_fields):
    load(tenant_fixture("shut", **tenant_fields))
    for path in ("/book/shut", "/book/shut?date=2026-12-01", "/book/shut/details/hold_" + "a" * 24):
        assert_page(client.get(path), 404)


@pytest.mark.parametrize(
    "path",
    [
        "/book/nobody",
        "/book/" + "x" * 300,
        "/book/acme%00",
        "/book/acme%0A",
        "/book/acme/unknown/page",
        "/portal/nothing",
    ],
)
def test_unknown_shops_and_paths_are_404_pages(client, shop, path):
    assert_page(client.get(path), 404)


def test_another_shop_s_hold_is_refused(client, shop):
    location = held_location(client, tenant="globex")
    stolen = location.replace("/book/globex/", "/book/acme/")
    assert_page(client.get(stolen), 404)
    before = snapshot()
    response = client.post(stolen, data={**details_form(client, location), **PERSON})
    assert_page(response, 404)
    assert snapshot() == before
    assert_page(
        client.post(stolen.replace("/details/", "/release/"), data=details_form(client, location)), 404
    )
    assert SlotHold.get().status == "active"


def test_a_confirmation_link_is_signed_and_bound_to_its_shop(client, shop):
    location = held_location(client)
    done = book(client, location).headers["Location"]
    assert client.get(done).status_code == 200
    assert_page(client.get(done.replace("/book/acme/", "/book/globex/")), 404)
    assert_page(client.get(done[:-3] + "abc"), 404)
    assert_page(client.get("/book/acme/booked/" + "1" * 500), 404)


def test_a_filled_in_honeypot_is_refused_and_nothing_is_written(client, shop):
    before_holds = hold_rows()
    assert_page(hold(client, "acme", DAY, TIME, website="http://spam.example"), 400)
    assert hold_rows() == before_holds
    location = held_location(client)
    before = snapshot()
    response = book(client, location, website="http://spam.example")
    assert_page(response, 400)
    assert "If you are a person" in page_text(response)
    assert snapshot() == before


def test_a_form_sent_faster_than_a_person_types_is_refused(app, client, shop, monkeypatch):
    location = held_location(client)
    monkeypatch.setitem(app.config, "BOOKING_MIN_FILL_SECONDS", 30)
    before = snapshot()
    assert_page(book(client, location), 400)
    fields = details_form(client, location)
    del fields["started"]
    assert_page(client.post(location, data={**fields, **PERSON}), 400)
    assert_page(client.post(location, data={**fields, **PERSON, "started": "forged.stamp.value"}), 400)
    assert snapshot() == before


def test_every_form_needs_its_csrf_token(client, shop):
    location = held_location(client)
    fields = details_form(client, location)
    before, holds = snapshot(), hold_rows()
    forged = [
        ("/book/acme/hold", {"date": DAY, "time": "11:00"}),
        (location, {**PERSON, "started": fields["started"]}),
        (location, {**PERSON, "started": fields["started"], "csrf_token": "x" * 43}),
        (location.replace("/details/", "/release/"), {}),
    ]
    for path, data in forged:
        response = client.post(path, data=data)
        assert_page(response, 403)
        assert "csrf_failed" in page_text(response)
    client.delete_cookie("shop_book", path="/book/")
    assert_page(client.post(location, data={**fields, **PERSON}), 403)
    assert snapshot() == before and hold_rows() == holds


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        pytest.param({"customer_name": ""}, "customer_name", "", id="a missing name"),
        pytest.param({"customer_phone": "  "}, "customer_phone", "", id="a blank phone"),
        pytest.param({"customer_name": "x" * 256}, "customer_name", "At most 255", id="an over-long name"),
        pytest.param({"notes": "n" * 1001}, "notes", "At most 1000", id="over-long notes"),
        pytest.param({"customer_email": "not-an-email"}, "customer_email", "", id="a bad email"),
        pytest.param({"customer_name": "Ann\x00Lee"}, "customer_name", "", id="a NUL in the name"),
        pytest.param({"customer_phone": "+1555\x07"}, "customer_phone", "", id="a control character"),
        pytest.param({"customer_name": ["Ann", "Bo"]}, "customer_name", "once", id="a repeated field"),
    ],
)
def test_bad_details_are_shown_beside_their_field_and_nothing_is_booked(client, shop, fields, field, message):
    location = held_location(client)
    before = snapshot()
    response = book(client, location, **fields)
    assert_page(response, 400)
    html = page_text(response)
    assert f'id="{field}-error"' in html and message in html.split(f'id="{field}-error"')[1][:200]
    assert f'aria-describedby="{field}-error"' in html
    assert snapshot() == before and SlotHold.get().state == "active"


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        pytest.param({"time": None}, "time", id="no time chosen"),
        pytest.param({"time": "25:00"}, "time", id="an impossible time"),
        pytest.param({"time": "10:07"}, "time", id="a time off the grid"),
        pytest.param({"time": ["10:00", "10:30"]}, "time", id="two times"),
        pytest.param({"time": "x" * 5000}, "time", id="an over-long time"),
        pytest.param({"date": "2026-13-01"}, "date", id="an impossible date"),
        pytest.param({"date": "2027-06-01"}, "date", id="a day beyond the list"),
        pytest.param({"date": "2026-11-01"}, "date", id="a day in the past"),
        pytest.param({"service": "teleport"}, "service", id="an unknown service"),
        pytest.param({"tech": "nobody\x00"}, "tech", id="an unknown tech"),
        pytest.param({"time": "12:00"}, "time", id="a closed time"),
    ],
)
def test_a_bad_choice_is_shown_beside_its_field_and_nothing_is_held(client, shop, fields, field):
    before = hold_rows()
    page = client.get(f"/book/acme?date={DAY}")
    data = {**hidden_fields(page_text(page), "hold-form"), "date": DAY, "time": TIME, **fields}
    response = client.post("/book/acme/hold", data={k: v for k, v in data.items() if v is not None})
    assert response.status_code in (400, 409), page_text(response)[:500]
    assert 'id="' + field + '-error"' in page_text(response)
    assert hold_rows() == before


@pytest.mark.parametrize(
    "query",
    ["date=yesterday", "date=2026-11-01", "service=teleport", "tech=" + "t" * 100, "date=2026-12-01&date=x"],
)
def test_a_bad_query_still_shows_the_page_with_the_error_beside_its_field(client, shop, query):
    response = client.get(f"/book/acme?{query}")
    assert_page(response, 400)
    assert 'class="field-error"' in page_text(response)


def test_typed_markup_is_shown_as_text_never_run(client, shop):
    attack = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    location = held_location(client)
    done = book(client, location, customer_name=attack, notes=attack)
    html = page_text(client.get(done.headers["Location"]))
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    refused = book(client, held_location(client, time="10:30"), customer_name=attack, customer_email="bad")
    assert "<img src=x" not in page_text(refused) and "&lt;img src=x" in page_text(refused)


def test_requests_are_rate_limited_per_address(app, client, shop, monkeypatch):
    monkeypatch.setitem(app.config, "BOOKING_RATE_CAPACITY", 3)
    monkeypatch.setitem(app.config, "BOOKING_RATE_REFILL", 0.001)
    statuses = [client.get("/book/acme").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    refused = client.get("/book/acme", environ_base={"REMOTE_ADDR": "127.0.0.1"})
    assert_page(refused, 429)
    assert "Retry-After" in refused.headers
    other = client.get("/book/acme", environ_base={"REMOTE_ADDR": "10.1.2.3"})
    assert other.status_code == 200


def test_bodies_the_page_cannot_read_are_pages_not_500s(client, shop):
    location = held_location(client)
    for body, kind in (("{}", "application/json"), (b"\xff\xfe", "application/x-www-form-urlencoded")):
        response = client.post(location, data=body, content_type=kind)
        assert response.status_code in (400, 403) and response.mimetype == "text/html"
    # a method no route has on an existing path: the app's routing answers (the JSON 405), as in the console
    assert client.put("/book/acme").status_code == 405

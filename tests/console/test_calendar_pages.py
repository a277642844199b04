"""The console's Calendar through the test client: the week, slot capacity and reasons, booking, and
cancel / complete / no-show with the API's own rules and messages, and moving an appointment (the
API's PATCH: capacity, reminders re-planned, appointment.updated)."""

import re

import pytest

from shop.models import Appointment, AppointmentReminder, Event
from tests.helpers import auth_headers, logged_rows, tenant_fixture
from tests.helpers.appointments import BASE, BOOKING, HOLDS, NEW, TICKETS, set_clock, snapshot
from tests.helpers.console import page_text, sign_in
from tests.helpers.processes import wait_until

TOKEN = "sk_test_acme_token_0001"
API = auth_headers(TOKEN)
WEEK = "/console/calendar?week=2026-12-01"


@pytest.fixture
def shop(load):
    """acme with booking settings (capacity 2), on Wednesday 2026-11-25 at noon UTC."""
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking=BOOKING, tickets=TICKETS))


def book(client, **fields) -> int:
    response = client.post(BASE, json={**NEW, **fields}, headers=API)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def slot(html: str, day: str, time: str) -> str:
    """The text of one slot's list item."""
    found = re.search(
        rf'id="slot-{day}-{time.replace(":", "")}">(.*?)</li>\s*(?=<li class="slot|</ul>)', html, re.S
    )
    assert found, f"no slot {day} {time} on the page"
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())


def remaining(html: str, day: str, time: str) -> str:
    return re.search(r"(\d+) / (\d+)", slot(html, day, time)).group(0)


def test_the_week_shows_each_day_with_its_slots_and_capacity(client, shop):
    sign_in(client, TOKEN)
    html = page_text(client.get(WEEK))
    assert "Week of Monday 30 November 2026" in html and "America/New_York" in html
    assert "2 places per slot" in html
    for day in ("2026-11-30", "2026-12-01", "2026-12-06"):
        assert f'id="day-{day}"' in html
    assert remaining(html, "2026-12-01", "10:00") == "2 / 2"
    assert "The shop is closed" not in slot(html, "2026-12-01", "10:00")
    wednesday = html.split('id="day-2026-12-02"')[1].split("</section>")[0]
    assert "Closed." in wednesday and 'class="slot' not in wednesday
    assert (
        'href="/console/calendar?week=2026-11-23"' in html
        and 'href="/console/calendar?week=2026-12-07"' in html
    )


def test_a_booked_slot_s_capacity_falls_and_its_reason_says_why(client, shop):
    sign_in(client, TOKEN)
    assert remaining(page_text(client.get(WEEK)), "2026-12-01", "10:00") == "2 / 2"
    first = book(client)
    html = page_text(client.get(WEEK))
    assert remaining(html, "2026-12-01", "10:00") == "1 / 2"
    assert f'id="appointment-{first}"' in html and "Ann Lee" in html
    book(client, customer_name="Bo Chen")
    full = slot(page_text(client.get(WEEK)), "2026-12-01", "10:00")
    assert "0 / 2" in full and "Full: 2 booked and 0 held of 2 places." in full
    assert "<details>" in page_text(client.get(WEEK))  # the reasons open without script


def test_past_and_too_soon_slots_explain_the_notice(client, shop):
    sign_in(client, TOKEN)
    html = page_text(client.get("/console/calendar?week=2026-11-25"))
    assert "Closed." in html.split('id="day-2026-11-25"')[1].split("</section>")[0]  # a Wednesday
    assert "60 minutes&#39; notice" in slot(html, "2026-11-23", "10:00")


def test_booking_from_the_calendar_uses_the_api_s_rules(client, shop):
    csrf = sign_in(client, TOKEN)
    form = {
        "csrf_token": csrf,
        "scheduled_date": "2026-12-01",
        "scheduled_time": "10:00",
        "customer_name": "Cy Walk-in",
        "customer_phone": "+15555550111",
        "duration_minutes": "30",
    }
    response = client.post("/console/calendar/book", data=form)
    assert response.status_code == 303
    booked = Appointment.get(Appointment.customer_name == "Cy Walk-in")
    assert (
        response.headers["Location"]
        == f"/console/calendar?week=2026-12-01&done=booked#appointment-{booked.id}"
    )
    assert booked.source == "staff" and booked.status == "scheduled"
    assert remaining(page_text(client.get(WEEK)), "2026-12-01", "10:00") == "1 / 2"
    client.post("/console/calendar/book", data={**form, "customer_name": "Second"})
    refused = client.post("/console/calendar/book", data={**form, "customer_name": "Third"})
    assert refused.status_code == 409 and "has no place left" in page_text(refused)
    assert Appointment.select().count() == 2


@pytest.mark.parametrize(
    "action, status",
    [
        pytest.param("cancel", "cancelled", id="cancel"),
        pytest.param("complete", "completed", id="complete"),
        pytest.param("no-show", "no_show", id="no-show"),
    ],
)
def test_an_action_moves_the_status_and_shows_it(client, shop, action, status):
    csrf = sign_in(client, TOKEN)
    appointment = book(client)
    response = client.post(
        f"/console/calendar/{action}", data={"csrf_token": csrf, "appointment_id": appointment}
    )
    assert response.status_code == 303
    assert Appointment.get_by_id(appointment).status == status
    html = page_text(client.get(response.headers["Location"]))
    item = html.split(f'id="appointment-{appointment}"')[1].split("</li>")[0]
    assert f"status-{status}" in item and "button" not in item  # a finished one offers no action


def test_cancel_records_the_reason_and_frees_the_slot(client, shop):
    csrf = sign_in(client, TOKEN)
    appointment = book(client)
    form = {"csrf_token": csrf, "appointment_id": appointment, "reason": "Customer called"}
    assert client.post("/console/calendar/cancel", data=form).status_code == 303
    assert Appointment.get_by_id(appointment).cancellation_reason == "Customer called"
    html = page_text(client.get(WEEK))
    assert "reason: Customer called" in html and remaining(html, "2026-12-01", "10:00") == "2 / 2"


@pytest.mark.parametrize(
    "first, then, status, message",
    [
        pytest.param("cancel", "cancel", 422, "already cancelled", id="cancel twice"),
        pytest.param("cancel", "complete", 409, "cannot be marked completed", id="complete a cancelled one"),
        pytest.param(
            "complete", "complete", 409, "completed cannot be marked completed", id="complete twice"
        ),
        pytest.param("no-show", "no-show", 409, "no_show cannot be marked no_show", id="no-show twice"),
    ],
)
def test_a_refused_transition_shows_the_api_s_message(client, shop, first, then, status, message):
    csrf = sign_in(client, TOKEN)
    appointment = book(client)
    form = {"csrf_token": csrf, "appointment_id": appointment}
    assert client.post(f"/console/calendar/{first}", data=form).status_code == 303
    before = Appointment.get_by_id(appointment).status
    response = client.post(f"/console/calendar/{then}", data=form)
    assert response.status_code == status and message in page_text(response)
    assert response.mimetype == "text/html" and Appointment.get_by_id(appointment).status == before


def test_a_key_with_read_only_sees_the_week_without_forms(client, load):
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking=BOOKING, scopes=["appointments.read"]))
    csrf = sign_in(client, TOKEN)
    html = page_text(client.get(WEEK))
    assert "Book an appointment" not in html and "/console/calendar/cancel" not in html
    appointment = Appointment.create(tenant="acme", **{**NEW, "scheduled_date": "2026-12-01"})
    response = client.post(
        "/console/calendar/cancel", data={"csrf_token": csrf, "appointment_id": appointment.id}
    )
    assert response.status_code == 403 and "appointments.write" in page_text(response)
    assert Appointment.get_by_id(appointment.id).status == "scheduled"


def test_a_key_without_appointments_read_has_no_calendar(client, load):
    load(tenant_fixture("acme", scopes=["notifications.read"]))
    sign_in(client, TOKEN)
    assert "/console/calendar" not in page_text(client.get("/console/"))
    response = client.get(WEEK)
    assert response.status_code == 403 and "appointments.read" in page_text(response)


def test_a_shop_without_booking_settings_shows_appointments_and_says_so(client, load):
    load(tenant_fixture("acme"))
    sign_in(client, TOKEN)
    html = page_text(client.get(WEEK))
    assert "Online booking is not set up" in html and 'class="slot' not in html


def test_a_live_hold_takes_a_place_and_says_so(client, shop):
    sign_in(client, TOKEN)
    hold = {"date": "2026-12-01", "time": "10:00"}
    for _ in range(2):
        assert client.post(HOLDS, json=hold, headers=API).status_code == 201
    held = slot(page_text(client.get(WEEK)), "2026-12-01", "10:00")
    assert "0 / 2" in held and "Held: 0 booked and 2 held (checkouts in progress) of 2 places." in held


def test_calendar_pages_and_actions_are_in_the_usage_log(client, shop):
    csrf = sign_in(client, TOKEN)
    appointment = book(client)
    client.get(WEEK)
    client.post("/console/calendar/complete", data={"csrf_token": csrf, "appointment_id": appointment})
    client.post("/console/calendar/complete", data={"csrf_token": csrf, "appointment_id": appointment})
    expected = {
        ("GET", "/console/calendar", 200, "key_acme"),
        ("POST", "/console/calendar/complete", 303, "key_acme"),
        ("POST", "/console/calendar/complete", 409, "key_acme"),
    }
    # the background writer may hold a batch mid-commit when this test flushes: look until it lands
    wait_until(lambda: expected <= {(r.method, r.path, r.status, r.api_key_id) for r in logged_rows()}, 10)


def test_each_appointment_lists_its_reminders_and_their_state(client, load):
    """issue 25: the rows of GET /appointments/<id>/reminders, in the shop's time, on the Calendar."""
    set_clock("2026-11-30T20:00:00")  # 15:00 local the day before: the 24 h reminder is too late
    rules = [{"before_minutes": 1440, "channels": ["sms"]}, {"before_minutes": 120, "channels": ["sms"]}]
    booking = {**BOOKING, "reminders": rules, "customer_messages": {"cancellation": True}}
    load(tenant_fixture("acme", booking=booking, tickets=TICKETS))
    kept, cancelled = book(client), book(client, scheduled_time="11:00")
    client.post(f"{BASE}/{cancelled}/cancel", json={}, headers=API)
    sign_in(client, TOKEN)
    html = page_text(client.get(WEEK))
    listed = re.search(rf'id="appointment-{kept}">(.*?)</li>\s*</ul>', html, re.S).group(1)
    text = " ".join(re.sub(r"<[^>]+>", " ", listed).split())
    assert "Reminder 24 h before · Mon 30 Nov 10:00 · skipped (too late when booked)" in text
    assert "Reminder 2 h before · Tue 1 Dec 08:00 · pending" in text
    other = html.split(f'id="appointment-{cancelled}"')[1].split("</ul>")[0]
    other = " ".join(re.sub(r"<[^>]+>", " ", other).split())
    assert "Reminder 2 h before · Tue 1 Dec 09:00 · cancelled (the appointment was cancelled)" in other
    assert "Cancellation notice" in other and "sent by sms" in other


@pytest.mark.parametrize("action, status", [("complete", "completed"), ("no-show", "no_show")])
def test_dashboard_completions_and_no_shows_are_not_delivered_but_the_apis_are(client, shop, action, status):
    """The spec: appointment.completed and appointment.no_show only for API-driven changes; the
    dashboard's move is the same domain function and stops the reminders all the same."""
    csrf = sign_in(client, TOKEN)
    from_dashboard, from_api = book(client), book(client, scheduled_time="11:00")
    response = client.post(
        f"/console/calendar/{action}", data={"csrf_token": csrf, "appointment_id": from_dashboard}
    )
    assert response.status_code == 303 and Appointment.get_by_id(from_dashboard).status == status
    api_path = "no_show" if action == "no-show" else "complete"
    assert client.post(f"{BASE}/{from_api}/{api_path}", headers=API).status_code == 200
    finished = [e.data["id"] for e in Event.select() if e.type == f"appointment.{status}"]
    assert finished == [from_api]


# --- moving an appointment (issue 27 item 5): the API's PATCH from a form (or a drag) -------------

MOVE = "/console/calendar/move"
REMINDERS = [{"before_minutes": 1440, "channels": ["sms"]}, {"before_minutes": 120, "channels": ["sms"]}]


def reminder_states(client, appointment_id: int) -> list[tuple]:
    """(kind, before_minutes, scheduled_for, status, reason) of each of the appointment's rows (the API's)."""
    response = client.get(f"{BASE}/{appointment_id}/reminders", headers=API)
    assert response.status_code == 200, response.get_json()
    return [
        (r["kind"], r["before_minutes"], r["scheduled_for"], r["status"], r["reason"])
        for r in response.get_json()["data"]
    ]


def written() -> tuple:
    """Appointments, events and reminder rows: what a refused move must leave as they were."""
    return snapshot(), [
        tuple(r) for r in AppointmentReminder.select().order_by(AppointmentReminder.id).tuples()
    ]


def move_form(csrf: str, appointment_id, **fields) -> dict:
    return {
        "csrf_token": csrf,
        "appointment_id": appointment_id,
        "scheduled_date": "2026-12-03",
        "scheduled_time": "11:00",
        **fields,
    }


def test_moving_an_appointment_reschedules_it_as_the_api_s_patch_does(client, load):
    set_clock("2026-11-25T12:00:00")
    booking = {**BOOKING, "reminders": REMINDERS, "customer_messages": {"reschedule": True}}
    load(tenant_fixture("acme", booking=booking, tickets=TICKETS))
    appointment = book(client)  # Tuesday 1 December 10:00 (15:00 UTC)
    assert [r[2:4] for r in reminder_states(client, appointment)] == [
        ("2026-11-30T15:00:00.000Z", "pending"),
        ("2026-12-01T13:00:00.000Z", "pending"),
    ]
    csrf = sign_in(client, TOKEN)
    response = client.post(MOVE, data=move_form(csrf, appointment))  # to Thursday 3 December 11:00
    assert response.status_code == 303
    assert (
        response.headers["Location"]
        == f"/console/calendar?week=2026-12-03&done=moved#appointment-{appointment}"
    )
    moved = Appointment.get_by_id(appointment)
    assert (str(moved.scheduled_date), moved.scheduled_time, moved.duration_minutes) == (
        "2026-12-03",
        "11:00",
        30,
    )
    updated = [e.data for e in Event.select() if e.type == "appointment.updated"]
    assert len(updated) == 1
    assert (updated[0]["id"], updated[0]["scheduled_date"], updated[0]["scheduled_time"]) == (
        str(appointment),
        "2026-12-03",
        "11:00",
    )
    rows = reminder_states(client, appointment)
    assert [r for r in rows if r[0] == "reminder" and r[3] == "cancelled"] == [
        ("reminder", 1440, "2026-11-30T15:00:00.000Z", "cancelled", "rescheduled"),
        ("reminder", 120, "2026-12-01T13:00:00.000Z", "cancelled", "rescheduled"),
    ]
    assert [r for r in rows if r[0] == "reminder" and r[3] == "pending"] == [
        ("reminder", 1440, "2026-12-02T16:00:00.000Z", "pending", None),
        ("reminder", 120, "2026-12-03T14:00:00.000Z", "pending", None),
    ]
    assert [r[0] for r in rows].count("reschedule") == 1  # the customer is told of the move
    html = page_text(client.get(response.headers["Location"]))
    assert "Moved." in html
    assert remaining(html, "2026-12-03", "11:00") == "1 / 2"
    item = html.split(f'id="appointment-{appointment}"')[1].split("</li>")[0]
    assert "<strong>11:00</strong>" in item
    tuesday = page_text(client.get(WEEK))
    assert remaining(tuesday, "2026-12-01", "10:00") == "2 / 2"  # the old place is free again


def test_a_move_can_change_the_length_too_and_an_empty_length_keeps_it(client, shop):
    csrf = sign_in(client, TOKEN)
    appointment = book(client)
    form = move_form(csrf, appointment, scheduled_date="2026-12-01", scheduled_time="10:00")
    assert client.post(MOVE, data={**form, "duration_minutes": "60"}).status_code == 303
    assert Appointment.get_by_id(appointment).duration_minutes == 60
    assert (
        client.post(MOVE, data={**form, "scheduled_time": "13:00", "duration_minutes": ""}).status_code == 303
    )
    moved = Appointment.get_by_id(appointment)
    assert (moved.scheduled_time, moved.duration_minutes) == ("13:00", 60)
    assert len([e for e in Event.select() if e.type == "appointment.updated"]) == 2


def test_a_time_off_the_slot_grid_is_taken_as_the_api_s_patch_takes_it(client, shop):
    csrf = sign_in(client, TOKEN)
    by_form, by_api = book(client), book(client, customer_name="Bo Chen")
    answer = client.patch(
        f"{BASE}/{by_api}", json={"scheduled_date": "2026-12-03", "scheduled_time": "10:15"}, headers=API
    )
    response = client.post(MOVE, data=move_form(csrf, by_form, scheduled_time="10:15"))
    assert answer.status_code == 200 and response.status_code == 303
    assert (
        Appointment.get_by_id(by_form).scheduled_time
        == Appointment.get_by_id(by_api).scheduled_time
        == "10:15"
    )


def test_a_move_to_a_full_slot_is_refused_with_the_free_starts_and_writes_nothing(client, shop):
    csrf = sign_in(client, TOKEN)
    appointment = book(client)
    book(client, customer_name="Bo Chen", scheduled_date="2026-12-03", scheduled_time="11:00")
    book(client, customer_name="Cy Park", scheduled_date="2026-12-03", scheduled_time="11:00")
    before = written()
    response = client.post(MOVE, data=move_form(csrf, appointment))
    assert response.status_code == 409 and response.mimetype == "text/html"
    text = page_text(response)
    assert "Not moved: 2026-12-03 11:00 has no place left for 30 minutes." in text
    assert "Free instead: 2026-12-03 11:30" in text and "slot_unavailable" in text
    assert written() == before


@pytest.mark.parametrize("action", ["cancel", "complete", "no-show"])
def test_a_finished_appointment_cannot_be_moved(client, shop, action):
    csrf = sign_in(client, TOKEN)
    appointment = book(client)
    done = client.post(
        f"/console/calendar/{action}", data={"csrf_token": csrf, "appointment_id": appointment}
    )
    assert done.status_code == 303
    html = page_text(client.get(WEEK))
    item = html.split(f'id="appointment-{appointment}"')[1].split("</li>")[0]
    tag = re.search(rf'<li [^>]*id="appointment-{appointment}">', html).group(0)
    assert MOVE not in item and "draggable" not in tag
    before = written()
    response = client.post(MOVE, data=move_form(csrf, appointment))
    assert response.status_code == 409
    assert "a cancelled, completed or no-show appointment cannot be moved" in page_text(response)
    assert written() == before


def test_the_week_offers_a_move_form_and_drop_targets_to_writers(client, shop):
    appointment = book(client)
    sign_in(client, TOKEN)
    html = page_text(client.get(WEEK))
    assert f'id="move-{appointment}"' in html and 'name="scheduled_date" value="2026-12-01"' in html
    assert f'draggable="true" data-appointment="{appointment}"' in html
    assert 'data-date="2026-12-01" data-time="10:00"' in html


def test_a_read_only_key_has_no_move(client, load):
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking=BOOKING, scopes=["appointments.read"]))
    appointment = Appointment.create(tenant="acme", **NEW)
    csrf = sign_in(client, TOKEN)
    html = page_text(client.get(WEEK))
    assert MOVE not in html and "draggable" not in html and "data-date=" not in html
    response = client.post(MOVE, data=move_form(csrf, appointment.id))
    assert response.status_code == 403 and "appointments.write" in page_text(response)
    assert Appointment.get_by_id(appointment.id).scheduled_time == "10:00"


LONG = "9" * 5000
BAD_MOVES = [
    ({"scheduled_date": "2026-02-30"}, 400, "scheduled_date", "no such day"),
    ({"scheduled_date": "2026-12-1"}, 400, "scheduled_date", "a date not written YYYY-MM-DD"),
    ({"scheduled_date": "99999-01-01"}, 400, "scheduled_date", "a five-digit year"),
    ({"scheduled_date": ""}, 400, "scheduled_date", "no date"),
    ({"scheduled_date": ["2026-12-03", "2026-12-04"]}, 400, "scheduled_date", "two dates"),
    ({"scheduled_date": LONG}, 400, "scheduled_date", "an over-long date"),
    ({"scheduled_date": "2026-12-0\x00"}, 400, "scheduled_date", "a NUL in the date"),
    ({"scheduled_time": "25:00"}, 400, "scheduled_time", "no such time"),
    ({"scheduled_time": "11:00:00"}, 400, "scheduled_time", "a time with seconds"),
    ({"scheduled_time": "1100"}, 400, "scheduled_time", "a time without a colon"),
    ({"scheduled_time": "11:0\x00"}, 400, "scheduled_time", "a NUL in the time"),
    ({"scheduled_time": ["11:00", "12:00"]}, 400, "scheduled_time", "two times"),
    ({"scheduled_time": ""}, 400, "scheduled_time", "no time"),
    ({"duration_minutes": "abc"}, 400, "duration_minutes", "a length that is no number"),
    ({"duration_minutes": "²"}, 400, "duration_minutes", "a superscript digit"),
    ({"duration_minutes": "1.5"}, 400, "duration_minutes", "a fraction"),
    ({"duration_minutes": "0"}, 400, "duration_minutes", "a zero length"),
    ({"duration_minutes": "-30"}, 400, "duration_minutes", "a negative length"),
    ({"duration_minutes": "999999"}, 400, "duration_minutes", "a huge length"),
    ({"duration_minutes": LONG}, 400, "duration_minutes", "an over-long length"),
    ({"duration_minutes": ["30", "60"]}, 400, "duration_minutes", "two lengths"),
    ({"appointment_id": "abc"}, 400, "appointment_id", "a non-numeric id"),
    ({"appointment_id": "-1"}, 400, "appointment_id", "a negative id"),
    ({"appointment_id": "99999999999999999999"}, 400, "appointment_id", "a huge id"),
    ({"appointment_id": ["{acme}", "{acme}"]}, 400, "appointment_id", "two ids"),
    ({"appointment_id": ""}, 400, "appointment_id", "no id"),
    ({"appointment_id": "2147483647"}, 404, None, "an unknown appointment"),
    ({"appointment_id": "{globex}"}, 404, None, "another tenant's appointment"),
]


@pytest.fixture
def two_shops(client, load):
    """acme and globex, each with one appointment on Tuesday 1 December 10:00; acme signed in."""
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking=BOOKING), tenant_fixture("globex", booking=BOOKING))
    ids = {}
    for tenant in ("acme", "globex"):
        response = client.post(BASE, json=NEW, headers=auth_headers(f"sk_test_{tenant}_token_0001"))
        ids[tenant] = str(response.get_json()["id"])
    return ids, sign_in(client, TOKEN)


@pytest.mark.parametrize(
    "fields, status, param, label", [pytest.param(*case, id=case[3]) for case in BAD_MOVES]
)
def test_bad_move_input_gets_a_clear_page_and_writes_nothing(client, two_shops, fields, status, param, label):
    ids, csrf = two_shops
    form = move_form(csrf, ids["acme"])
    for name, value in fields.items():
        values = value if isinstance(value, list) else [value]
        form[name] = [v.format(**ids) if name == "appointment_id" else v for v in values]
    before = written()
    response = client.post(MOVE, data=form)
    assert response.status_code == status, page_text(response)
    assert response.mimetype == "text/html" and "Traceback" not in page_text(response)
    if param:
        assert param in " ".join(re.sub(r"<[^>]+>", " ", page_text(response)).split())
    else:
        assert "No appointment" in page_text(response)
    assert written() == before


def test_a_move_without_the_csrf_token_is_refused(client, two_shops):
    ids, csrf = two_shops
    before = written()
    for token in (None, "forged"):
        form = move_form(csrf, ids["acme"])
        form.pop("csrf_token")
        if token:
            form["csrf_token"] = token
        response = client.post(MOVE, data=form)
        assert response.status_code == 403 and "csrf_failed" in page_text(response)
    assert written() == before

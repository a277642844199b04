"""The appointment endpoints: create, retrieve, list, patch, cancel, complete, no_show, link_ticket."""

import pytest

from shop.models import Appointment
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.appointments import BASE, BOOKING, NEW, TICKETS, event_types, events, set_clock

LEAN_KEYS = {
    "object",
    "id",
    "status",
    "scheduled_date",
    "scheduled_time",
    "duration_minutes",
    "tech_id",
    "ticket_id",
    "customer_name",
    "source",
    "created_at",
    "source_kind",
}


@pytest.fixture
def shop(load):
    set_clock("2026-11-25T12:00:00")
    load(
        tenant_fixture("acme", booking=BOOKING, tickets=TICKETS),
        tenant_fixture("globex", booking=BOOKING, tickets=[{"id": "2001"}]),
    )
    return auth_headers("sk_test_acme_token_0001")


def create(client, headers, **fields):
    response = client.post(BASE, json={**NEW, **fields}, headers=headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def test_create_returns_the_appointment_and_emits_a_lean_created_event(client, shop):
    body = create(client, shop, customer_email="ann@example.com", notes="Back door", ticket_id=1001)
    assert body["object"] == "appointment" and isinstance(body["id"], int)
    assert body["status"] == "scheduled" and body["duration_minutes"] == 30
    assert body["ticket_id"] == "1001" and body["updated_at"] is None and body["cancelled_at"] is None
    assert body["source"] == "api" and body["created_at"].endswith("Z")
    [data] = events("appointment.created")
    assert set(data) == LEAN_KEYS
    assert data["id"] == str(body["id"]) and data["source_kind"] == "observed"
    assert data["ticket_id"] == "1001" and data["customer_name"] == "Ann Lee"
    assert data["source"] == "api"


def test_retrieve_and_another_tenants_appointment_is_not_found(client, shop):
    body = create(client, shop)
    assert client.get(f"{BASE}/{body['id']}", headers=shop).get_json() == body
    other = auth_headers("sk_test_globex_token_0001")
    assert_error(client.get(f"{BASE}/{body['id']}", headers=other), 404, "not_found", "id")
    assert_error(client.post(f"{BASE}/{body['id']}/cancel", headers=other), 404, "not_found", "id")


def test_read_key_cannot_write(client, load):
    load(tenant_fixture("acme", scopes=["appointments.read"]))
    headers = auth_headers("sk_test_acme_token_0001")
    error = assert_error(client.post(BASE, json=NEW, headers=headers), 403, "insufficient_scope")
    assert error["details"]["required_scope"] == "appointments.write"
    assert client.get(f"{BASE}/slots?date=2026-12-01", headers=headers).status_code == 200


def test_list_is_latest_date_first_with_a_stable_tie_breaker_and_pages(client, shop):
    made = [
        create(client, shop, scheduled_date=d, scheduled_time=t)["id"]
        for d, t in [
            ("2026-12-01", "10:00"),
            ("2026-12-03", "09:00"),
            ("2026-12-01", "10:00"),
            ("2026-12-01", "11:00"),
            ("2026-12-04", "09:00"),
        ]
    ]
    expected = [made[4], made[1], made[3], made[2], made[0]]
    seen, cursor = [], None
    while True:
        query = f"{BASE}?limit=2" + (f"&cursor={cursor}" if cursor else "")
        page = client.get(query, headers=shop).get_json()
        seen += [item["id"] for item in page["data"]]
        if not page["has_more"]:
            assert page["next_cursor"] is None
            break
        cursor = page["next_cursor"]
    assert seen == expected


def test_list_filters(client, shop, load):
    a = create(client, shop, scheduled_date="2026-12-01", customer_email="Ann@Example.com", ticket_id="1001")
    b = create(client, shop, scheduled_date="2026-12-03", scheduled_time="09:00")
    client.post(f"{BASE}/{b['id']}/cancel", headers=shop)
    load(
        {
            "id": "extra",
            "name": "x",
            "appointments": [
                {
                    "id": 900,
                    "customer_name": "X",
                    "customer_phone": "1",
                    "scheduled_date": "2026-12-01",
                    "scheduled_time": "09:00",
                }
            ],
        }
    )
    Appointment.update(tech_id="alex", location_id=3).where(Appointment.id == a["id"]).execute()

    def ids(query):
        response = client.get(f"{BASE}?{query}", headers=shop)
        assert response.status_code == 200, response.get_json()
        return [item["id"] for item in response.get_json()["data"]]

    assert ids("") == [b["id"], a["id"]]
    assert ids("date_from=2026-12-02") == [b["id"]]
    assert ids("date_to=2026-12-01") == [a["id"]]
    assert ids("date_from=2026-12-01&date_to=2026-12-01") == [a["id"]]
    assert ids("status=cancelled") == [b["id"]]
    assert ids("location_id=3") == [a["id"]]
    assert ids("customer_email=ANN@example.COM") == [a["id"]]
    assert ids("ticket_id=1001") == [a["id"]]
    assert ids("tech_id=alex") == [a["id"]]
    assert ids("tech_id=bo") == []


def test_patch_edits_fields_sets_updated_at_and_emits_updated(client, shop):
    body = create(client, shop, customer_email="ann@example.com")
    response = client.patch(
        f"{BASE}/{body['id']}",
        headers=shop,
        json={"scheduled_time": "14:00", "customer_email": None, "notes": "Call first"},
    )
    assert response.status_code == 200
    patched = response.get_json()
    assert patched["scheduled_time"] == "14:00" and patched["customer_email"] is None
    assert patched["updated_at"] is not None
    [data] = events("appointment.updated")
    assert set(data) == LEAN_KEYS | {"updated_at"} and data["scheduled_time"] == "14:00"
    assert data["updated_at"] == patched["updated_at"]


def test_patch_that_changes_nothing_emits_nothing(client, shop):
    body = create(client, shop)
    response = client.patch(f"{BASE}/{body['id']}", json={"scheduled_time": "10:00"}, headers=shop)
    assert response.status_code == 200 and response.get_json()["updated_at"] is None
    assert event_types() == ["appointment.created"]


@pytest.mark.parametrize(
    "start, target, ok",
    [
        ("scheduled", "pending", True),
        ("scheduled", "confirmed", True),
        ("scheduled", "checked_in", True),
        ("pending", "scheduled", True),
        ("confirmed", "pending", True),
        ("confirmed", "checked_in", True),
        ("checked_in", "confirmed", True),
        ("checked_in", "scheduled", False),
        ("checked_in", "pending", False),
        ("confirmed", "completed", True),
        ("checked_in", "no_show", True),
    ],
    ids=lambda v: str(v),
)
def test_patch_status_moves_between_non_terminal_statuses(client, shop, start, target, ok):
    body = create(client, shop)
    Appointment.update(status=start).where(Appointment.id == body["id"]).execute()
    response = client.patch(f"{BASE}/{body['id']}", json={"status": target}, headers=shop)
    if ok:
        assert response.status_code == 200 and response.get_json()["status"] == target
        assert events("appointment.updated")[-1]["status"] == target
    else:
        assert_error(response, 409, "status_transition_failed", "status")
        assert event_types() == ["appointment.created"]


def test_terminal_status_in_patch_must_be_the_only_field(client, shop):
    body = create(client, shop)
    response = client.patch(f"{BASE}/{body['id']}", json={"status": "completed", "notes": "x"}, headers=shop)
    assert_error(response, 400, "invalid_status", "status")


def test_terminal_appointment_needs_a_reset_to_confirmed(client, shop):
    body = create(client, shop)
    client.post(f"{BASE}/{body['id']}/complete", headers=shop)
    for change in ({"notes": "late"}, {"status": "checked_in"}, {"status": "cancelled"}):
        response = client.patch(f"{BASE}/{body['id']}", json=change, headers=shop)
        assert_error(response, 409, "status_reset_required", "status")
    response = client.patch(f"{BASE}/{body['id']}", json={"status": "confirmed"}, headers=shop)
    assert response.status_code == 200 and response.get_json()["status"] == "confirmed"
    assert event_types() == ["appointment.created", "appointment.completed", "appointment.updated"]


def test_cancel_records_time_and_reason_and_emits_only_canceled(client, shop):
    body = create(client, shop)
    response = client.post(f"{BASE}/{body['id']}/cancel", json={"reason": "Customer called"}, headers=shop)
    cancelled = response.get_json()
    assert response.status_code == 200 and cancelled["status"] == "cancelled"
    assert cancelled["cancelled_at"] and cancelled["cancellation_reason"] == "Customer called"
    assert cancelled["updated_at"] is None
    assert event_types() == ["appointment.created", "appointment.canceled"]
    data = events("appointment.canceled")[0]
    assert set(data) == LEAN_KEYS | {"cancelled_at", "cancellation_reason"}
    assert data["cancellation_reason"] == "Customer called"
    assert data["cancelled_at"] == cancelled["cancelled_at"]


def test_cancel_without_a_body_and_twice(client, shop):
    body = create(client, shop)
    assert client.post(f"{BASE}/{body['id']}/cancel", headers=shop).status_code == 200
    assert_error(client.post(f"{BASE}/{body['id']}/cancel", headers=shop), 422, "cancel_failed")
    assert event_types() == ["appointment.created", "appointment.canceled"]


def test_patch_to_cancelled_is_a_cancellation(client, shop):
    body = create(client, shop)
    response = client.patch(f"{BASE}/{body['id']}", json={"status": "cancelled"}, headers=shop)
    assert response.status_code == 200 and response.get_json()["cancelled_at"]
    assert event_types() == ["appointment.created", "appointment.canceled"]


def test_uncancel_by_reset_to_confirmed_then_cancel_again(client, shop):
    body = create(client, shop)
    client.post(f"{BASE}/{body['id']}/cancel", json={"reason": "sick"}, headers=shop)
    assert_error(client.post(f"{BASE}/{body['id']}/complete", headers=shop), 409, "status_transition_failed")
    response = client.patch(f"{BASE}/{body['id']}", json={"status": "confirmed"}, headers=shop)
    restored = response.get_json()
    assert restored["status"] == "confirmed" and restored["cancelled_at"] is None
    assert restored["cancellation_reason"] is None and restored["updated_at"]
    assert events("appointment.updated")[0]["status"] == "confirmed"
    assert client.post(f"{BASE}/{body['id']}/cancel", headers=shop).status_code == 200
    assert event_types() == [
        "appointment.created",
        "appointment.canceled",
        "appointment.updated",
        "appointment.canceled",
    ]


def test_uncancel_into_a_full_slot_is_status_reset_failed(client, shop):
    body = create(client, shop)
    client.post(f"{BASE}/{body['id']}/cancel", headers=shop)
    create(client, shop)
    create(client, shop)
    response = client.patch(f"{BASE}/{body['id']}", json={"status": "confirmed"}, headers=shop)
    assert_error(response, 409, "status_reset_failed", "scheduled_time")
    assert Appointment.get_by_id(body["id"]).status == "cancelled"


def test_create_and_reschedule_into_a_full_slot_are_slot_unavailable(client, shop):
    create(client, shop)
    create(client, shop, scheduled_time="10:15")
    assert_error(client.post(BASE, json=NEW, headers=shop), 409, "slot_unavailable", "scheduled_time")
    assert_error(
        client.post(BASE, json={**NEW, "scheduled_time": "09:30", "duration_minutes": 60}, headers=shop),
        409,
        "slot_unavailable",
        "scheduled_time",
    )
    other = create(client, shop, scheduled_time="15:00")
    response = client.patch(f"{BASE}/{other['id']}", json={"scheduled_time": "10:00"}, headers=shop)
    assert_error(response, 409, "slot_unavailable", "scheduled_time")
    # moving within its own place does not count itself
    longer = client.patch(f"{BASE}/{other['id']}", json={"duration_minutes": 45}, headers=shop)
    assert longer.status_code == 200


def test_complete_and_no_show_emit_the_full_appointment(client, shop):
    first, second = create(client, shop), create(client, shop, scheduled_time="15:00")
    done = client.post(f"{BASE}/{first['id']}/complete", headers=shop).get_json()
    missed = client.post(f"{BASE}/{second['id']}/no_show", json={}, headers=shop).get_json()
    assert done["status"] == "completed" and missed["status"] == "no_show"
    assert events("appointment.completed") == [done]
    assert events("appointment.no_show") == [missed]
    assert_error(client.post(f"{BASE}/{first['id']}/complete", headers=shop), 409, "status_transition_failed")
    assert_error(client.post(f"{BASE}/{second['id']}/no_show", headers=shop), 409, "status_transition_failed")


def test_link_ticket_accepts_a_string_or_an_integer(client, shop):
    body = create(client, shop)
    response = client.post(f"{BASE}/{body['id']}/link_ticket", json={"ticket_id": 1001}, headers=shop)
    linked = response.get_json()
    assert response.status_code == 200 and linked["ticket_id"] == "1001" and linked["updated_at"]
    assert events("appointment.updated")[0]["ticket_id"] == "1001"
    again = client.post(f"{BASE}/{body['id']}/link_ticket", json={"ticket_id": "1001"}, headers=shop)
    assert again.status_code == 200 and len(events("appointment.updated")) == 1
    unlinked = client.patch(f"{BASE}/{body['id']}", json={"ticket_id": None}, headers=shop).get_json()
    assert unlinked["ticket_id"] is None


@pytest.mark.parametrize(
    "ticket",
    ["1002", "1003", "1004", "9999", "2001", 2001, "abc"],
    ids=[
        "billing-only",
        "hidden",
        "deleted",
        "missing",
        "another tenant's",
        "another tenant's as integer",
        "not a ticket id",
    ],
)
def test_link_ticket_to_an_invisible_ticket_is_not_found(client, shop, ticket):
    body = create(client, shop)
    response = client.post(f"{BASE}/{body['id']}/link_ticket", json={"ticket_id": ticket}, headers=shop)
    assert_error(response, 404, "not_found", "ticket_id")
    patch = client.patch(f"{BASE}/{body['id']}", json={"ticket_id": ticket}, headers=shop)
    assert_error(patch, 404, "not_found", "ticket_id")
    assert Appointment.get_by_id(body["id"]).ticket_id is None


def test_link_ticket_on_a_cancelled_appointment_is_refused(client, shop):
    body = create(client, shop)
    client.post(f"{BASE}/{body['id']}/cancel", headers=shop)
    response = client.post(f"{BASE}/{body['id']}/link_ticket", json={"ticket_id": "1001"}, headers=shop)
    assert_error(response, 422, "link_ticket_failed")


@pytest.mark.parametrize(
    "action, body",
    [
        ("", NEW),
        ("/cancel", {"reason": "x"}),
        ("/complete", None),
        ("/no_show", None),
    ],
    ids=["create", "cancel", "complete", "no_show"],
)
def test_idempotent_replay_returns_the_same_result_and_emits_nothing_new(client, shop, action, body):
    target = BASE if not action else f"{BASE}/{create(client, shop, scheduled_time='15:00')['id']}{action}"
    headers = {**shop, "Idempotency-Key": "retry-me-0001"}
    first = client.post(target, json=body, headers=headers)
    count = len(event_types())
    second = client.post(target, json=body, headers=headers)
    assert first.status_code in (200, 201) and second.status_code == first.status_code
    assert second.get_json() == first.get_json() and second.headers["Idempotent-Replayed"] == "true"
    assert len(event_types()) == count


def test_activity_books_an_online_appointment_with_an_observed_event(client, shop, runner):
    import json

    data = {**NEW, "tech_id": "alex", "scheduled_date": "2026-11-30", "duration_minutes": 60}
    result = runner.invoke(
        args=["shop", "activity", "appointment.created", "--tenant", "acme", "--data", json.dumps(data)]
    )
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["source"] == "online_booking" and record["tech_id"] == "alex"
    [event] = events("appointment.created")
    assert event["source_kind"] == "observed" and event["tech_id"] == "alex"
    assert event["source"] == "online_booking"  # the event says how it was booked, as the record does
    bad = runner.invoke(
        args=[
            "shop",
            "activity",
            "appointment.created",
            "--tenant",
            "acme",
            "--data",
            json.dumps({**data, "scheduled_time": "25:00"}),
        ]
    )
    assert bad.exit_code != 0 and "scheduled_time" in bad.output
    assert Appointment.select().count() == 1


def test_date_from_after_date_to_is_an_empty_page(client, shop):
    create(client, shop)
    body = client.get(f"{BASE}?date_from=2026-12-05&date_to=2026-12-01", headers=shop).get_json()
    assert body["data"] == [] and body["has_more"] is False


def test_no_show_on_a_cancelled_appointment_keeps_its_cancellation_time(client, shop):
    body = create(client, shop)
    cancelled = client.post(f"{BASE}/{body['id']}/cancel", headers=shop).get_json()
    missed = client.post(f"{BASE}/{body['id']}/no_show", headers=shop).get_json()
    assert missed["status"] == "no_show" and missed["cancelled_at"] == cancelled["cancelled_at"]
    assert missed["updated_at"] is None


def test_completed_and_no_show_appointments_still_use_their_places(client, shop):
    first, second = create(client, shop), create(client, shop)
    client.post(f"{BASE}/{first['id']}/complete", headers=shop)
    client.post(f"{BASE}/{second['id']}/no_show", headers=shop)
    assert_error(client.post(BASE, json=NEW, headers=shop), 409, "slot_unavailable", "scheduled_time")


def test_staff_may_book_outside_opening_hours_and_in_the_past(client, shop):
    create(client, shop, scheduled_date="2026-12-02", scheduled_time="07:00")  # a closed Wednesday
    create(client, shop, scheduled_date="2025-01-06", scheduled_time="23:30")


def test_without_booking_settings_there_is_no_capacity_limit(client, load):
    load(tenant_fixture("acme"))
    headers = auth_headers("sk_test_acme_token_0001")
    for _ in range(3):
        create(client, headers)


def test_uncancel_and_reschedule_in_one_patch(client, shop):
    body = create(client, shop)
    client.post(f"{BASE}/{body['id']}/cancel", headers=shop)
    response = client.patch(
        f"{BASE}/{body['id']}", json={"status": "confirmed", "scheduled_time": "15:00"}, headers=shop
    )
    moved = response.get_json()
    assert (moved["status"], moved["scheduled_time"], moved["cancelled_at"]) == ("confirmed", "15:00", None)
    assert event_types()[-1] == "appointment.updated"


def test_a_reset_from_completed_that_reschedules_into_a_full_slot_is_refused(client, shop):
    body = create(client, shop, scheduled_time="15:00")
    client.post(f"{BASE}/{body['id']}/complete", headers=shop)
    create(client, shop)
    create(client, shop)
    response = client.patch(
        f"{BASE}/{body['id']}", json={"status": "confirmed", "scheduled_time": "10:00"}, headers=shop
    )
    assert_error(response, 409, "slot_unavailable", "scheduled_time")
    assert Appointment.get_by_id(body["id"]).status == "completed"


@pytest.mark.postgres_only
def test_a_booking_is_three_round_trips_on_postgres_and_loses_nothing(client, load):
    # the key and its bucket; the day's lock with the settings, the day's bookings, the next id and
    # the subscriptions read ahead; the appointment, its event, the delivery, its job and the COMMIT
    from shop.models import Event, WebhookDelivery
    from tests.helpers.round_trips import counted_round_trips

    set_clock("2026-11-25T12:00:00")
    hook = {
        "url": "https://hooks.example.com/x",
        "events": ["appointment.created"],
        "signing_secret": "whsec_" + "0" * 32,
    }
    load(tenant_fixture("acme", booking=BOOKING, tickets=TICKETS, webhook_subscriptions=[hook]))
    headers = auth_headers("sk_test_acme_token_0001")
    create(client, headers)  # the statements prepared, the key's bucket made
    with counted_round_trips() as trips:
        body = create(client, headers, customer_email="Ann@Example.com", scheduled_time="10:00")
    assert trips.count == 3, trips.trace
    saved = Appointment.get_by_id(body["id"])
    assert (saved.scheduled_time, saved.email_key) == ("10:00", "ann@example.com")
    [event] = [e for e in Event.select() if e.data["id"] == str(body["id"])]
    assert event.type == "appointment.created"
    assert WebhookDelivery.select().where(WebhookDelivery.event == event.id).count() == 1


def test_create_accepts_a_tech_and_a_service_of_the_roster(client, shop):
    """Issue 23, item 9: the fields the object and the slots query have, instead of Unknown field."""
    created = create(client, shop, tech_id="bo", service_id="quick-check")
    assert created["tech_id"] == "bo"
    assert client.get(f"{BASE}/{created['id']}", headers=shop).get_json()["tech_id"] == "bo"


@pytest.mark.parametrize(
    "fields, code, param",
    [
        ({"tech_id": "zed"}, "invalid_field", "tech_id"),
        ({"tech_id": ""}, "invalid_field", "tech_id"),
        ({"tech_id": "t" * 41}, "invalid_field", "tech_id"),
        ({"service_id": "nails"}, "invalid_service_id", "service_id"),
        ({"service_id": ""}, "invalid_service_id", "service_id"),
    ],
    ids=[
        "a tech off the roster",
        "an empty tech",
        "an over-long tech",
        "an unknown service",
        "an empty service",
    ],
)
def test_create_refuses_a_tech_or_service_not_in_the_settings(client, shop, fields, code, param):
    response = client.post(BASE, json={**NEW, **fields}, headers=shop)
    assert_error(response, 400, code, param)
    assert Appointment.select().count() == 0

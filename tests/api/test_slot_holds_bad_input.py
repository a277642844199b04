"""Bad input on the hold routes, hold_id on create and explain on slots: the spec's body, nothing written."""

import pytest

from shop.models import SlotHold
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.appointments import BASE, BOOKING, HOLDS, NEW, SLOTS, hold_rows, set_clock, snapshot

ACME = auth_headers("sk_test_acme_token_0001")
GOOD = {"date": "2026-12-01", "time": "10:00"}
UNKNOWN_HOLD = "hold_" + "0" * 24


@pytest.fixture
def shop(load):
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking=BOOKING))
    return ACME


def case(case_id, body, code, param, status=400):
    return pytest.param(body, status, code, param, id=case_id)


HOLD_BODIES = [
    case("no date", {"time": "10:00"}, "missing_field", "date"),
    case("no time", {"date": "2026-12-01"}, "missing_field", "time"),
    case("an empty body", {}, "missing_field", "date"),
    case("an impossible date", {**GOOD, "date": "2026-02-30"}, "invalid_date", "date"),
    case("a date as a number", {**GOOD, "date": 20261201}, "invalid_date", "date"),
    case("a date as a list", {**GOOD, "date": ["2026-12-01"]}, "invalid_date", "date"),
    case("a null date", {**GOOD, "date": None}, "invalid_date", "date"),
    case("an over-long date", {**GOOD, "date": "2026-12-01" * 100}, "invalid_date", "date"),
    case("time 24:00", {**GOOD, "time": "24:00"}, "invalid_time", "time"),
    case("time with seconds", {**GOOD, "time": "10:00:00"}, "invalid_time", "time"),
    case("a time as a number", {**GOOD, "time": 1000}, "invalid_time", "time"),
    case("a time as an object", {**GOOD, "time": {"h": 10}}, "invalid_time", "time"),
    *[
        case(
            f"duration {value!r}",
            {**GOOD, "duration_minutes": value},
            "invalid_duration_minutes",
            "duration_minutes",
        )
        for value in (0, -5, 1.5, "30", True, None, 1441, 2**64, [30])
    ],
    case("an empty service", {**GOOD, "service_id": ""}, "invalid_service_id", "service_id"),
    case(
        "a service over 40 characters", {**GOOD, "service_id": "s" * 41}, "invalid_service_id", "service_id"
    ),
    case("an unknown service", {**GOOD, "service_id": "no-such"}, "invalid_service_id", "service_id"),
    case(
        "a service as a list", {**GOOD, "service_id": ["screen-repair"]}, "invalid_service_id", "service_id"
    ),
    case("a tech over 40 characters", {**GOOD, "tech_id": "t" * 41}, "invalid_field", "tech_id"),
    case("a tech as a number", {**GOOD, "tech_id": 7}, "invalid_field", "tech_id"),
    case("an unknown tech", {**GOOD, "tech_id": "nobody"}, "invalid_field", "tech_id"),
    case("an unknown field", {**GOOD, "customer_name": "Ann"}, "invalid_field", "customer_name"),
    case("a body that is a list", [GOOD], "invalid_json", None),
]


@pytest.mark.parametrize(("body", "status", "code", "param"), HOLD_BODIES)
def test_a_bad_hold_body_is_refused_and_holds_nothing(client, shop, body, status, code, param):
    response = client.post(HOLDS, json=body, headers=shop)
    assert_error(response, status, code, param)
    assert hold_rows() == []


@pytest.mark.parametrize(
    ("data", "content_type", "status", "code"),
    [
        ('{"date": "2026-12-01", "time": ', "application/json", 400, "invalid_json"),
        (
            '{"date": "2026-12-01", "time": "10:00", "duration_minutes": NaN}',
            "application/json",
            400,
            "invalid_json",
        ),
        ("date=2026-12-01&time=10:00", "application/x-www-form-urlencoded", 415, "unsupported_media_type"),
        ('{"date": "2026-12-01", "time": "10:00"}', "text/plain", 415, "unsupported_media_type"),
    ],
    ids=["truncated JSON", "NaN in JSON", "a form body", "JSON sent as text/plain"],
)
def test_a_hold_body_that_is_not_json_is_refused(client, shop, data, content_type, status, code):
    response = client.post(HOLDS, data=data, headers={**shop, "Content-Type": content_type})
    assert_error(response, status, code, None)
    assert hold_rows() == []


CREATE_WITH_HOLD = [
    case("a hold id without its prefix", {**NEW, "hold_id": "0" * 24}, "invalid_field", "hold_id"),
    case("a hold id with upper-case hex", {**NEW, "hold_id": "hold_" + "A" * 24}, "invalid_field", "hold_id"),
    case("an over-long hold id", {**NEW, "hold_id": "hold_" + "0" * 5000}, "invalid_field", "hold_id"),
    case("a hold id as a number", {**NEW, "hold_id": 12}, "invalid_field", "hold_id"),
    case("a hold id as a list", {**NEW, "hold_id": [UNKNOWN_HOLD]}, "invalid_field", "hold_id"),
    case("a null hold id", {**NEW, "hold_id": None}, "invalid_field", "hold_id"),
    case("an unknown hold", {**NEW, "hold_id": UNKNOWN_HOLD}, "not_found", "hold_id", 404),
]


@pytest.mark.parametrize(("body", "status", "code", "param"), CREATE_WITH_HOLD)
def test_a_bad_hold_id_on_create_books_nothing(client, shop, body, status, code, param):
    before = snapshot()
    assert_error(client.post(BASE, json=body, headers=shop), status, code, param)
    assert snapshot() == before and hold_rows() == []


@pytest.mark.parametrize(
    "hold_id",
    [UNKNOWN_HOLD, "hold_short", "200", "hold_" + "0" * 500, "hold_%00", "..%2F..%2Fappointments"],
    ids=[
        "an unknown hold",
        "a malformed hold id",
        "a numeric id",
        "an over-long id",
        "a NUL byte",
        "an encoded path",
    ],
)
def test_releasing_a_hold_that_is_not_one_of_ours_is_not_found(client, shop, hold_id):
    response = client.delete(f"{HOLDS}/{hold_id}", headers=shop)
    assert response.status_code == 404 and response.get_json()["error"]["code"] == "not_found"


def test_release_takes_no_body_fields(client, shop):
    held = client.post(HOLDS, json=GOOD, headers=shop).get_json()
    response = client.delete(f"{HOLDS}/{held['id']}", json={"reason": "x"}, headers=shop)
    assert_error(response, 400, "invalid_field", "reason")
    assert SlotHold.get_by_id(held["id"]).status == "active"


@pytest.mark.parametrize(
    "query",
    ["explain=yes", "explain=", "explain=2", "explain=true&explain=false", "explain[]=true"],
    ids=["yes", "empty", "two", "twice", "as an array"],
)
def test_a_bad_explain_value_is_invalid_query(client, shop, query):
    assert_error(
        client.get(f"{SLOTS}?date=2026-12-01&{query}", headers=shop), 400, "invalid_query", "explain"
    )


def test_the_hold_routes_need_their_scopes(client, load):
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking=BOOKING, scopes=["appointments.read"]))
    headers = auth_headers("sk_test_acme_token_0001")
    error = assert_error(client.post(HOLDS, json=GOOD, headers=headers), 403, "insufficient_scope", None)
    assert error["details"]["required_scope"] == "appointments.write"
    assert_error(client.delete(f"{HOLDS}/{UNKNOWN_HOLD}", headers=headers), 403, "insufficient_scope", None)
    assert hold_rows() == []

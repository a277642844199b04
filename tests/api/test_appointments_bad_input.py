"""Bad input on every appointment route: the spec's status, code and param, no 500, nothing written."""

import pytest

from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.appointments import BASE, BOOKING, NEW, TICKETS, set_clock, snapshot

LONG = "x" * 2000


@pytest.fixture
def booked(load, client):
    """A shop with one appointment (id 500) and one cancelled appointment (id 501)."""
    set_clock("2026-11-25T12:00:00")
    base = {
        "customer_name": "Ann",
        "customer_phone": "1",
        "scheduled_date": "2026-12-01",
        "scheduled_time": "10:00",
    }
    load(
        tenant_fixture(
            "acme",
            booking=BOOKING,
            tickets=TICKETS,
            appointments=[{"id": 500, **base}, {"id": 501, **base, "status": "cancelled"}],
        )
    )
    return auth_headers("sk_test_acme_token_0001")


def bad(case_id, method, path, body, status, code, param, **kwargs):
    return pytest.param(method, path, body, status, code, param, id=case_id, **kwargs)


CREATE = [
    bad(
        "a NUL in the service description",
        "post",
        "",
        {**NEW, "service_description": "Screen\x00"},
        400,
        "invalid_field",
        "service_description",
    ),
    bad(
        "create without customer_name is missing_field",
        "post",
        "",
        {k: v for k, v in NEW.items() if k != "customer_name"},
        400,
        "missing_field",
        "customer_name",
    ),
    bad(
        "create without customer_phone is missing_field",
        "post",
        "",
        {k: v for k, v in NEW.items() if k != "customer_phone"},
        400,
        "missing_field",
        "customer_phone",
    ),
    bad(
        "create without scheduled_date is missing_field",
        "post",
        "",
        {k: v for k, v in NEW.items() if k != "scheduled_date"},
        400,
        "missing_field",
        "scheduled_date",
    ),
    bad(
        "create without scheduled_time is missing_field",
        "post",
        "",
        {k: v for k, v in NEW.items() if k != "scheduled_time"},
        400,
        "missing_field",
        "scheduled_time",
    ),
    bad(
        "an impossible date 2026-02-30",
        "post",
        "",
        {**NEW, "scheduled_date": "2026-02-30"},
        400,
        "invalid_scheduled_date",
        "scheduled_date",
    ),
    bad(
        "a date without leading zeros",
        "post",
        "",
        {**NEW, "scheduled_date": "2026-2-3"},
        400,
        "invalid_scheduled_date",
        "scheduled_date",
    ),
    bad(
        "a date as a number",
        "post",
        "",
        {**NEW, "scheduled_date": 20261201},
        400,
        "invalid_scheduled_date",
        "scheduled_date",
    ),
    bad(
        "a null date",
        "post",
        "",
        {**NEW, "scheduled_date": None},
        400,
        "invalid_scheduled_date",
        "scheduled_date",
    ),
    bad(
        "time 24:00",
        "post",
        "",
        {**NEW, "scheduled_time": "24:00"},
        400,
        "invalid_scheduled_time",
        "scheduled_time",
    ),
    bad(
        "time 9:5",
        "post",
        "",
        {**NEW, "scheduled_time": "9:5"},
        400,
        "invalid_scheduled_time",
        "scheduled_time",
    ),
    bad(
        "time 12:60",
        "post",
        "",
        {**NEW, "scheduled_time": "12:60"},
        400,
        "invalid_scheduled_time",
        "scheduled_time",
    ),
    bad(
        "time with seconds",
        "post",
        "",
        {**NEW, "scheduled_time": "12:00:00"},
        400,
        "invalid_scheduled_time",
        "scheduled_time",
    ),
    *[
        bad(
            f"duration {value!r}",
            "post",
            "",
            {**NEW, "duration_minutes": value},
            400,
            "invalid_duration_minutes",
            "duration_minutes",
        )
        for value in (0, -1, 1.5, "30", True, None, 1441, 2**40)
    ],
    bad(
        "a name over 255 characters",
        "post",
        "",
        {**NEW, "customer_name": "x" * 256},
        400,
        "invalid_field",
        "customer_name",
    ),
    bad("an empty name", "post", "", {**NEW, "customer_name": ""}, 400, "invalid_field", "customer_name"),
    bad(
        "a phone over 50 characters",
        "post",
        "",
        {**NEW, "customer_phone": "1" * 51},
        400,
        "invalid_field",
        "customer_phone",
    ),
    bad(
        "an email over 320 characters",
        "post",
        "",
        {**NEW, "customer_email": "a" * 310 + "@example.com"},
        400,
        "invalid_field",
        "customer_email",
    ),
    bad(
        "an email that is not one",
        "post",
        "",
        {**NEW, "customer_email": "not-an-email"},
        400,
        "invalid_field",
        "customer_email",
    ),
    bad(
        "a service description over 1000",
        "post",
        "",
        {**NEW, "service_description": "x" * 1001},
        400,
        "invalid_field",
        "service_description",
    ),
    bad("notes over 5000", "post", "", {**NEW, "notes": "x" * 5001}, 400, "invalid_field", "notes"),
    bad(
        "a ticket id as a fraction", "post", "", {**NEW, "ticket_id": 1.5}, 400, "invalid_field", "ticket_id"
    ),
    bad(
        "a ticket id as a boolean", "post", "", {**NEW, "ticket_id": True}, 400, "invalid_field", "ticket_id"
    ),
    bad("a ticket id of zero", "post", "", {**NEW, "ticket_id": 0}, 400, "invalid_field", "ticket_id"),
    bad("a hidden ticket", "post", "", {**NEW, "ticket_id": "1003"}, 404, "not_found", "ticket_id"),
    bad("an unknown field", "post", "", {**NEW, "technician": "alex"}, 400, "invalid_field", "technician"),
    bad(
        "a name as a list",
        "post",
        "",
        {**NEW, "customer_name": ["Ann"]},
        400,
        "invalid_field",
        "customer_name",
    ),
    bad("a body that is a list", "post", "", [NEW], 400, "invalid_json", None),
]

PATCH = [
    bad("an empty patch is no_fields", "patch", "/500", {}, 400, "no_fields", None),
    bad(
        "a patch of unknown fields only is no_fields",
        "patch",
        "/500",
        {"colour": "red"},
        400,
        "no_fields",
        None,
    ),
    bad(
        "an unknown field beside a known one",
        "patch",
        "/500",
        {"notes": "x", "colour": "red"},
        400,
        "invalid_field",
        "colour",
    ),
    bad(
        "a null duration",
        "patch",
        "/500",
        {"duration_minutes": None},
        400,
        "invalid_duration_minutes",
        "duration_minutes",
    ),
    bad(
        "a string duration",
        "patch",
        "/500",
        {"duration_minutes": "45"},
        400,
        "invalid_duration_minutes",
        "duration_minutes",
    ),
    bad("an unknown status", "patch", "/500", {"status": "done"}, 400, "invalid_status", "status"),
    bad("a null status", "patch", "/500", {"status": None}, 400, "invalid_status", "status"),
    bad(
        "a terminal status with another field",
        "patch",
        "/500",
        {"status": "no_show", "notes": "x"},
        400,
        "invalid_status",
        "status",
    ),
    bad("a null name", "patch", "/500", {"customer_name": None}, 400, "invalid_field", "customer_name"),
    bad(
        "a null date",
        "patch",
        "/500",
        {"scheduled_date": None},
        400,
        "invalid_scheduled_date",
        "scheduled_date",
    ),
    bad(
        "an impossible date",
        "patch",
        "/500",
        {"scheduled_date": "2026-02-30"},
        400,
        "invalid_scheduled_date",
        "scheduled_date",
    ),
    bad(
        "time 24:00",
        "patch",
        "/500",
        {"scheduled_time": "24:00"},
        400,
        "invalid_scheduled_time",
        "scheduled_time",
    ),
    bad("over-long notes", "patch", "/500", {"notes": "x" * 5001}, 400, "invalid_field", "notes"),
    bad("a NUL in the notes", "patch", "/500", {"notes": "a\x00b"}, 400, "invalid_field", "notes"),
    bad(
        "a NUL in the customer name",
        "patch",
        "/500",
        {"customer_name": "\x00"},
        400,
        "invalid_field",
        "customer_name",
    ),
    bad("a billing-only ticket", "patch", "/500", {"ticket_id": "1002"}, 404, "not_found", "ticket_id"),
    bad(
        "an edit of a cancelled appointment",
        "patch",
        "/501",
        {"notes": "x"},
        409,
        "status_reset_required",
        "status",
    ),
    bad("a non-numeric id", "patch", "/abc", {"notes": "x"}, 400, "invalid_id", "id"),
    bad("an id above 2,147,483,647", "patch", "/2147483648", {"notes": "x"}, 400, "invalid_id", "id"),
    bad("a bad id wins over a bad body", "patch", "/0", {}, 400, "invalid_id", "id"),
    bad("an unknown appointment", "patch", "/999", {"notes": "x"}, 404, "not_found", "id"),
]

ACTIONS = [
    bad(
        "cancel with an over-long reason",
        "post",
        "/500/cancel",
        {"reason": LONG},
        400,
        "invalid_field",
        "reason",
    ),
    bad("cancel with a numeric reason", "post", "/500/cancel", {"reason": 5}, 400, "invalid_field", "reason"),
    bad(
        "cancel with a NUL in the reason",
        "post",
        "/500/cancel",
        {"reason": "\x00"},
        400,
        "invalid_field",
        "reason",
    ),
    bad("cancel with an unknown field", "post", "/500/cancel", {"why": "x"}, 400, "invalid_field", "why"),
    bad("cancel of a cancelled appointment", "post", "/501/cancel", None, 422, "cancel_failed", None),
    bad("cancel of a negative id", "post", "/-1/cancel", None, 400, "invalid_id", "id"),
    bad("complete with a body field", "post", "/500/complete", {"at": "now"}, 400, "invalid_field", "at"),
    bad(
        "complete of a cancelled appointment",
        "post",
        "/501/complete",
        None,
        409,
        "status_transition_failed",
        None,
    ),
    bad("complete of an unknown appointment", "post", "/999/complete", None, 404, "not_found", "id"),
    bad(
        "no_show of an id above the 32-bit range",
        "post",
        "/99999999999/no_show",
        None,
        400,
        "invalid_id",
        "id",
    ),
    bad("link_ticket without ticket_id", "post", "/500/link_ticket", {}, 400, "missing_field", "ticket_id"),
    bad(
        "link_ticket with a null ticket",
        "post",
        "/500/link_ticket",
        {"ticket_id": None},
        400,
        "invalid_field",
        "ticket_id",
    ),
    bad(
        "link_ticket with an empty ticket",
        "post",
        "/500/link_ticket",
        {"ticket_id": ""},
        400,
        "invalid_field",
        "ticket_id",
    ),
    bad(
        "link_ticket with a negative ticket",
        "post",
        "/500/link_ticket",
        {"ticket_id": -5},
        400,
        "invalid_field",
        "ticket_id",
    ),
    bad(
        "link_ticket with a ticket above 32 bits",
        "post",
        "/500/link_ticket",
        {"ticket_id": 2**31},
        400,
        "invalid_field",
        "ticket_id",
    ),
    bad(
        "link_ticket with a list",
        "post",
        "/500/link_ticket",
        {"ticket_id": ["1001"]},
        400,
        "invalid_field",
        "ticket_id",
    ),
    bad(
        "link_ticket to a deleted ticket",
        "post",
        "/500/link_ticket",
        {"ticket_id": "1004"},
        404,
        "not_found",
        "ticket_id",
    ),
    bad(
        "link_ticket on a cancelled appointment",
        "post",
        "/501/link_ticket",
        {"ticket_id": "1001"},
        422,
        "link_ticket_failed",
        None,
    ),
    bad("retrieve of a fractional id", "get", "/1.5", None, 400, "invalid_id", "id"),
]

LIST = [
    bad(f"list with {query}", "get", f"?{query}", None, 400, code, param)
    for query, code, param in [
        ("date_from=2026-13-01", "invalid_date_from", "date_from"),
        ("date_from=yesterday", "invalid_date_from", "date_from"),
        ("date_to=2026-02-30", "invalid_date_to", "date_to"),
        ("status=done", "invalid_status", "status"),
        ("location_id=0", "invalid_location_id", "location_id"),
        ("location_id=abc", "invalid_location_id", "location_id"),
        ("location_id=2147483648", "invalid_location_id", "location_id"),
        ("location_id=1.5", "invalid_location_id", "location_id"),
        ("customer_email=", "invalid_customer_email", "customer_email"),
        (f"customer_email={'a' * 321}", "invalid_customer_email", "customer_email"),
        ("ticket_id=", "invalid_ticket_id", "ticket_id"),
        (f"ticket_id={'1' * 256}", "invalid_ticket_id", "ticket_id"),
        # a NUL matches no stored value, and PostgreSQL refuses it in a text parameter
        ("customer_email=a%00@b.c", "invalid_customer_email", "customer_email"),
        ("ticket_id=%00", "invalid_ticket_id", "ticket_id"),
        ("tech_id=t%00", "invalid_query", "tech_id"),
        (f"tech_id={'t' * 41}", "invalid_query", "tech_id"),
        ("status=confirmed&status=cancelled", "invalid_query", "status"),
        ("date_from[]=2026-12-01", "invalid_query", "date_from"),
        ("location_id[a]=1", "invalid_query", "location_id"),
        ("customer_email[]=a@b.c", "invalid_query", "customer_email"),
        ("limit=0", "invalid_query", "limit"),
        ("limit=101", "invalid_query", "limit"),
        ("cursor=garbage", "invalid_cursor", "cursor"),
    ]
]

SLOTS = [
    bad(f"slots with {query or 'no date'}", "get", f"/slots?{query}", None, 400, code, param)
    for query, code, param in [
        ("", "invalid_date", "date"),
        ("date=2026-02-30", "invalid_date", "date"),
        ("date=tomorrow", "invalid_date", "date"),
        ("date=2026-12-01&service_id=", "invalid_service_id", "service_id"),
        (f"date=2026-12-01&service_id={'s' * 41}", "invalid_service_id", "service_id"),
        ("date=2026-12-01&service_id=no-such-service", "invalid_service_id", "service_id"),
        (f"date=2026-12-01&tech_id={'t' * 41}", "invalid_query", "tech_id"),
        ("date=2026-12-01&date=2026-12-02", "invalid_query", "date"),
        ("date[x]=2026-12-01", "invalid_query", "date"),
        ("date=2026-12-01&service_id[]=screen-repair", "invalid_query", "service_id"),
        ("date=2026-12-01&tech_id=%00", "invalid_query", "tech_id"),
    ]
]


@pytest.mark.parametrize("method, path, body, status, code, param", CREATE + PATCH + ACTIONS + LIST + SLOTS)
def test_bad_input_is_refused_with_the_spec_code_and_changes_nothing(
    client, booked, method, path, body, status, code, param
):
    before = snapshot()
    kwargs = {"json": body} if body is not None else {}
    response = getattr(client, method)(BASE + path, headers=booked, **kwargs)
    assert response.status_code < 500
    assert_error(response, status, code, param)
    assert snapshot() == before

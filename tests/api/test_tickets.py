"""GET/POST /tickets, GET/PATCH /tickets/<id>: filters, cursors, statuses, teammates, and the events."""

import pytest

from shop.models import Ticket
from tests.helpers import assert_error, tenant_fixture
from tests.helpers.records_api import (
    GLOBEX,
    READ_ONLY,
    TOKEN,
    events,
    headers,
    logged,
    other_shop,
    records_shop,
    snapshot,
)

BASE = "/api/v1/tickets"
NEW = {
    "subject": "Water damage",
    "customer_id": "1",
    "description": "Dropped in a sink.",
    "device": "Pixel 8",
    "serial_number": "SN-123",
    "assigned_user_id": 7,
    "priority": "high",
    "due_at": "2026-12-01T12:00:00-05:00",
}


@pytest.fixture
def shop(load):
    load(records_shop(), other_shop())


def test_create_answers_the_ticket_and_emits_it_as_its_get_answers(client, shop):
    response = client.post(BASE, json=NEW, headers=headers())
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    assert created == {
        "object": "ticket",
        "id": created["id"],
        "customer_id": "1",
        "subject": "Water damage",
        "status": "New",
        "created_at": created["created_at"],
        "updated_at": None,
        "description": "Dropped in a sink.",
        "device": "Pixel 8",
        "serial_number": "SN-123",
        "assigned_user_id": 7,
        "priority": "high",
        "due_at": "2026-12-01T17:00:00.000Z",
    }
    assert client.get(f"{BASE}/{created['id']}", headers=headers()).get_json() == created
    assert events() == [("ticket.created", created)]


def test_create_takes_only_a_subject_and_starts_in_the_shops_first_status(client, load):
    load(tenant_fixture("acme", ticket_statuses=["Intake", "Bench", "Done"]))
    created = client.post(BASE, json={"subject": "Screen"}, headers=headers()).get_json()
    assert (created["status"], created["priority"], created["customer_id"]) == ("Intake", "normal", None)
    assert_error(
        client.post(BASE, json={"subject": "S", "status": "New"}, headers=headers()),
        400,
        "invalid_field",
        "status",
    )
    assert client.post(BASE, json={"subject": "S", "status": "Bench"}, headers=headers()).status_code == 201


def test_the_list_is_newest_first_and_leaves_hidden_deleted_and_other_shops_out(client, shop):
    listed = client.get(BASE, headers=headers()).get_json()
    assert listed["object"] == "list" and listed["has_more"] is False and listed["next_cursor"] is None
    assert [t["id"] for t in listed["data"]] == ["1001", "1002"]
    assert listed["data"][0] == client.get(f"{BASE}/1001", headers=headers()).get_json()


@pytest.mark.parametrize(
    "query, ids",
    [
        ("status=In%20Progress", ["1001"]),
        ("status=New", ["1002"]),
        ("status=Ready", []),
        ("customer_id=2", ["1002"]),
        ("customer_id=1&status=In%20Progress", ["1001"]),
        ("customer_id=21", []),
        ("customer_id=999", []),
    ],
    ids=[
        "in progress",
        "new",
        "none ready",
        "customer 2",
        "both filters",
        "another shop's customer",
        "no such customer",
    ],
)
def test_filters_by_status_and_customer(client, shop, query, ids):
    listed = client.get(f"{BASE}?{query}", headers=headers()).get_json()
    assert [t["id"] for t in listed["data"]] == ids


def test_cursor_pages_walk_every_ticket_once_and_stay_bound_to_their_filters(client, shop):
    for number in range(7):
        client.post(BASE, json={"subject": f"T{number}", "customer_id": 2}, headers=headers())
    seen, cursor = [], None
    while True:
        query = "limit=3&customer_id=2" + (f"&cursor={cursor}" if cursor else "")
        page = client.get(f"{BASE}?{query}", headers=headers()).get_json()
        seen += [t["id"] for t in page["data"]]
        if not page["has_more"]:
            assert page["next_cursor"] is None
            break
        cursor = page["next_cursor"]
        # a cursor is for the same filters only
        assert_error(
            client.get(f"{BASE}?limit=3&cursor={cursor}", headers=headers()), 400, "invalid_cursor", "cursor"
        )
    assert len(seen) == len(set(seen)) == 8
    assert seen[-1] == "1002"


@pytest.mark.parametrize(
    "query, code, param",
    [
        ("customer_id=0", "invalid_query", "customer_id"),
        ("customer_id=abc", "invalid_query", "customer_id"),
        ("customer_id=2147483648", "invalid_query", "customer_id"),
        ("customer_id=1&customer_id=2", "invalid_query", "customer_id"),
        ("status=", "invalid_query", "status"),
        ("status=" + "x" * 65, "invalid_query", "status"),
        ("status[]=New", "invalid_query", "status"),
        ("status=New%00", "invalid_query", "status"),
        ("limit=0", "invalid_query", "limit"),
        ("limit=101", "invalid_query", "limit"),
        ("cursor=abc", "invalid_cursor", "cursor"),
    ],
    ids=[
        "customer 0",
        "customer not a number",
        "customer past 32 bits",
        "customer twice",
        "empty status",
        "over-long status",
        "status as an array",
        "NUL in status",
        "limit 0",
        "limit 101",
        "malformed cursor",
    ],
)
def test_bad_list_queries_are_400(client, shop, query, code, param):
    assert_error(client.get(f"{BASE}?{query}", headers=headers()), 400, code, param)


@pytest.mark.parametrize(
    "ticket_id", ["1003", "1004", "2001", "9999"], ids=["hidden", "deleted", "another shop's", "missing"]
)
def test_hidden_deleted_and_other_shops_tickets_are_not_found(client, shop, ticket_id):
    before = snapshot()
    assert_error(client.get(f"{BASE}/{ticket_id}", headers=headers()), 404, "not_found", "id")
    assert_error(
        client.patch(f"{BASE}/{ticket_id}", json={"status": "Ready"}, headers=headers()),
        404,
        "not_found",
        "id",
    )
    assert snapshot() == before


def test_a_status_change_is_the_lean_event_naming_the_key(client, shop):
    response = client.patch(f"{BASE}/1001", json={"status": "Ready"}, headers=headers())
    assert response.status_code == 200
    ticket = response.get_json()
    assert ticket["status"] == "Ready"
    assert events() == [
        (
            "ticket.status_changed",
            {
                "object": "ticket",
                "id": "1001",
                "status": "Ready",
                "previous_status": "In Progress",
                "changed_at": ticket["updated_at"],
                "changed_by": "key_acme",
                "change_source": "api",
                "source_kind": "observed",
            },
        )
    ]
    # the same status again is no transition: no event, nothing written
    before = snapshot()
    assert client.patch(f"{BASE}/1001", json={"status": "Ready"}, headers=headers()).get_json() == ticket
    assert snapshot() == before


def test_other_fields_emit_updated_only_when_they_really_change(client, shop):
    updated = client.patch(
        f"{BASE}/1001", json={"device": "iPhone 13", "priority": "urgent"}, headers=headers()
    )
    ticket = updated.get_json()
    assert (ticket["device"], ticket["priority"], ticket["status"]) == ("iPhone 13", "urgent", "In Progress")
    assert events() == [("ticket.updated", ticket)]
    assert client.get(f"{BASE}/1001", headers=headers()).get_json() == ticket
    client.patch(f"{BASE}/1001", json={"device": "iPhone 13"}, headers=headers())
    client.patch(f"{BASE}/1001", json={}, headers=headers())
    assert len(events()) == 1


def test_status_and_fields_together_emit_both_events(client, shop):
    ticket = client.patch(
        f"{BASE}/1001", json={"status": "Resolved", "subject": "Fixed"}, headers=headers()
    ).get_json()
    assert [kind for kind, _ in events()] == ["ticket.status_changed", "ticket.updated"]
    assert events()[1][1] == ticket == client.get(f"{BASE}/1001", headers=headers()).get_json()


def test_patch_moves_assignment_customer_and_due_date_and_clears_them(client, shop):
    ticket = client.patch(
        f"{BASE}/1002",
        json={"assigned_user_id": 8, "customer_id": 1, "due_at": "2026-12-24T09:00:00Z"},
        headers=headers(),
    ).get_json()
    assert (ticket["assigned_user_id"], ticket["customer_id"], ticket["due_at"]) == (
        8,
        "1",
        "2026-12-24T09:00:00.000Z",
    )
    cleared = client.patch(
        f"{BASE}/1002",
        json={"assigned_user_id": None, "customer_id": None, "due_at": None},
        headers=headers(),
    ).get_json()
    assert (cleared["assigned_user_id"], cleared["customer_id"], cleared["due_at"]) == (None, None, None)


@pytest.mark.parametrize(
    "body, status, code, param",
    [
        ({"assigned_user_id": 9}, 400, "invalid_field", "assigned_user_id"),
        ({"assigned_user_id": 12345}, 400, "invalid_field", "assigned_user_id"),
        ({"customer_id": "21"}, 404, "not_found", "customer_id"),
        ({"customer_id": 999}, 404, "not_found", "customer_id"),
        ({"status": "Picked Up"}, 400, "invalid_field", "status"),
        ({"status": "ready"}, 400, "invalid_field", "status"),
    ],
    ids=[
        "another shop's teammate",
        "no such teammate",
        "another shop's customer",
        "no such customer",
        "a status outside the shop's list",
        "a status in the wrong case",
    ],
)
def test_references_outside_the_shop_are_refused_on_create_and_patch(client, shop, body, status, code, param):
    before = snapshot()
    assert_error(client.post(BASE, json={"subject": "S", **body}, headers=headers()), status, code, param)
    assert_error(client.patch(f"{BASE}/1001", json=body, headers=headers()), status, code, param)
    assert snapshot() == before


def test_the_shops_own_statuses_are_the_ones_accepted(client, load):
    load(
        tenant_fixture(
            "acme", ticket_statuses=["Intake", "Picked Up"], tickets=[{"id": "1001", "status": "Intake"}]
        )
    )
    changed = client.patch(f"{BASE}/1001", json={"status": "Picked Up"}, headers=headers()).get_json()
    assert changed["status"] == "Picked Up"
    assert_error(
        client.patch(f"{BASE}/1001", json={"status": "Ready"}, headers=headers()),
        400,
        "invalid_field",
        "status",
    )


def test_scopes(client, shop):
    for method, path in (("post", BASE), ("patch", f"{BASE}/1001")):
        response = getattr(client, method)(path, json={"subject": "S"}, headers=headers(READ_ONLY))
        assert assert_error(response, 403, "insufficient_scope")["details"] == {
            "required_scope": "tickets.write"
        }
    assert client.get(BASE, headers=headers(READ_ONLY)).status_code == 200
    assert client.get(BASE, headers=headers(GLOBEX)).get_json()["data"][0]["id"] == "2001"


def test_an_idempotent_retry_creates_one_ticket(client, shop):
    key = {"Idempotency-Key": "ticket-create-1"}
    first = client.post(BASE, json=NEW, headers=headers(TOKEN, **key))
    again = client.post(BASE, json=NEW, headers=headers(TOKEN, **key))
    assert first.get_json() == again.get_json() and again.status_code == 201
    assert Ticket.select().where(Ticket.subject == "Water damage").count() == 1
    assert len(events("ticket.created")) == 1
    assert_error(
        client.post(BASE, json={**NEW, "subject": "Other"}, headers=headers(TOKEN, **key)),
        409,
        "idempotency_key_reuse",
        "Idempotency-Key",
    )


def test_requests_are_logged_by_route(client, shop):
    client.post(BASE, json=NEW, headers=headers())
    client.patch(f"{BASE}/1001", json={"status": "Nope"}, headers=headers())
    assert [row.status for row in logged("POST", "/api/v1/tickets")] == [201]
    assert [row.status for row in logged("PATCH", "/api/v1/tickets/<id>")] == [400]


LONG = "x" * 256
BAD_BODIES = [
    ("missing subject", {"device": "X"}, "missing_field", "subject"),
    ("empty subject", {"subject": ""}, "invalid_field", "subject"),
    ("null subject", {"subject": None}, "invalid_field", "subject"),
    ("over-long subject", {"subject": LONG}, "invalid_field", "subject"),
    ("array for subject", {"subject": ["A"]}, "invalid_field", "subject"),
    ("number for subject", {"subject": 12}, "invalid_field", "subject"),
    ("NUL in subject", {"subject": "A\u0000"}, "invalid_field", "subject"),
    ("control NUL in description", {"subject": "S", "description": "\u0000"}, "invalid_field", "description"),
    ("over-long description", {"subject": "S", "description": "x" * 10001}, "invalid_field", "description"),
    ("over-long device", {"subject": "S", "device": LONG}, "invalid_field", "device"),
    ("over-long serial", {"subject": "S", "serial_number": LONG}, "invalid_field", "serial_number"),
    ("null status", {"subject": "S", "status": None}, "invalid_field", "status"),
    ("empty status", {"subject": "S", "status": ""}, "invalid_field", "status"),
    ("over-long status", {"subject": "S", "status": "x" * 65}, "invalid_field", "status"),
    ("unknown priority", {"subject": "S", "priority": "asap"}, "invalid_field", "priority"),
    ("null priority", {"subject": "S", "priority": None}, "invalid_field", "priority"),
    ("string assignee", {"subject": "S", "assigned_user_id": "7"}, "invalid_field", "assigned_user_id"),
    ("boolean assignee", {"subject": "S", "assigned_user_id": True}, "invalid_field", "assigned_user_id"),
    ("zero assignee", {"subject": "S", "assigned_user_id": 0}, "invalid_field", "assigned_user_id"),
    ("huge assignee", {"subject": "S", "assigned_user_id": 2147483648}, "invalid_value", "assigned_user_id"),
    ("fraction assignee", {"subject": "S", "assigned_user_id": 7.5}, "invalid_field", "assigned_user_id"),
    ("customer id zero", {"subject": "S", "customer_id": "0"}, "invalid_field", "customer_id"),
    ("customer id words", {"subject": "S", "customer_id": "one"}, "invalid_field", "customer_id"),
    ("customer id huge", {"subject": "S", "customer_id": "99999999999"}, "invalid_value", "customer_id"),
    ("customer id huge number", {"subject": "S", "customer_id": 10**30}, "invalid_value", "customer_id"),
    ("customer id array", {"subject": "S", "customer_id": ["1"]}, "invalid_field", "customer_id"),
    ("customer id boolean", {"subject": "S", "customer_id": True}, "invalid_field", "customer_id"),
    ("due_at not a time", {"subject": "S", "due_at": "tomorrow"}, "invalid_field", "due_at"),
    ("due_at a number", {"subject": "S", "due_at": 1700000000}, "invalid_field", "due_at"),
    ("unknown field", {"subject": "S", "hidden": True}, "invalid_field", "hidden"),
    ("an id of its own", {"subject": "S", "id": "1"}, "invalid_field", "id"),
]


@pytest.mark.parametrize("body, code, param", [c[1:] for c in BAD_BODIES], ids=[c[0] for c in BAD_BODIES])
def test_a_bad_create_body_is_refused_and_writes_nothing(client, shop, body, code, param):
    before = snapshot()
    assert_error(client.post(BASE, json=body, headers=headers()), 400, code, param)
    assert snapshot() == before


PATCHES = [c for c in BAD_BODIES if c[2] != "missing_field"]


@pytest.mark.parametrize("body, code, param", [c[1:] for c in PATCHES], ids=[c[0] for c in PATCHES])
def test_a_bad_patch_body_is_refused_and_writes_nothing(client, shop, body, code, param):
    before = snapshot()
    assert_error(client.patch(f"{BASE}/1001", json=body, headers=headers()), 400, code, param)
    assert snapshot() == before


@pytest.mark.parametrize("raw", ["0", "abc", "2147483648", "12345678901"], ids=lambda raw: f"id {raw}")
def test_a_bad_path_id_is_invalid_id_before_the_body_is_read(client, shop, raw):
    assert_error(
        client.patch(
            f"{BASE}/{raw}", data="{oops", headers={**headers(), "Content-Type": "application/json"}
        ),
        400,
        "invalid_id",
        "id",
    )

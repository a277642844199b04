"""GET/POST /leads, GET/PATCH /leads/<id> and POST /leads/<id>/convert."""

import pytest

from shop.models import Customer, Lead, Ticket
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.records_api import GLOBEX, READ_ONLY, events, headers, other_shop, records_shop, snapshot

BASE = "/api/v1/leads"
NEW = {"name": "Eli Moss", "email": "eli@example.com", "phone": "+15555550177", "source": "web_form"}


@pytest.fixture
def shop(load):
    load(records_shop(), other_shop())


def test_create_answers_the_lead_and_emits_it_as_its_get_answers(client, shop):
    response = client.post(BASE, json=NEW, headers=headers())
    assert response.status_code == 201, response.get_json()
    lead = response.get_json()
    assert lead == {
        "object": "lead",
        "id": lead["id"],
        **NEW,
        "status": "new",
        "customer_id": None,
        "converted_ticket_id": None,
        "converted_at": None,
        "created_at": lead["created_at"],
        "updated_at": None,
    }
    assert client.get(f"{BASE}/{lead['id']}", headers=headers()).get_json() == lead
    assert events() == [("lead.created", lead)]


def test_a_lead_may_start_in_a_later_pipeline_status_but_never_converted(client, shop):
    assert (
        client.post(BASE, json={"name": "A", "status": "qualified"}, headers=headers()).get_json()["status"]
        == "qualified"
    )
    assert_error(
        client.post(BASE, json={"name": "A", "status": "converted"}, headers=headers()),
        400,
        "invalid_field",
        "status",
    )


def test_the_list_is_newest_first_filtered_by_status_and_paged(client, shop):
    for number in range(4):
        client.post(BASE, json={"name": f"L{number}"}, headers=headers())
    everything = client.get(BASE, headers=headers()).get_json()
    assert [lead["name"] for lead in everything["data"]][:4] == ["L3", "L2", "L1", "L0"]
    assert {lead["id"] for lead in everything["data"]} >= {"6001", "6002"} and "6901" not in str(everything)
    converted = client.get(f"{BASE}?status=converted", headers=headers()).get_json()
    assert [lead["id"] for lead in converted["data"]] == ["6002"]
    first = client.get(f"{BASE}?limit=4", headers=headers()).get_json()
    second = client.get(f"{BASE}?limit=4&cursor={first['next_cursor']}", headers=headers()).get_json()
    assert first["has_more"] and not second["has_more"]
    assert len({lead["id"] for lead in first["data"] + second["data"]}) == 6
    assert_error(client.get(f"{BASE}?status=won", headers=headers()), 400, "invalid_query", "status")


def test_patch_emits_updated_only_for_a_real_change(client, shop):
    lead = client.patch(f"{BASE}/6001", json={"status": "contacted"}, headers=headers()).get_json()
    assert lead["status"] == "contacted" and lead["updated_at"] is not None
    assert events() == [("lead.updated", lead)]
    client.patch(f"{BASE}/6001", json={"status": "contacted", "name": "Cy Park"}, headers=headers())
    assert len(events()) == 1


def test_a_converted_lead_takes_no_change(client, shop):
    before = snapshot()
    assert_error(client.patch(f"{BASE}/6002", json={"name": "X"}, headers=headers()), 422, "unprocessable")
    assert_error(client.post(f"{BASE}/6002/convert", headers=headers()), 422, "unprocessable")
    assert snapshot() == before


def test_convert_creates_the_customer_and_ticket_in_one_go(client, shop):
    response = client.post(f"{BASE}/6001/convert", json={"subject": "Screen quote"}, headers=headers())
    assert response.status_code == 200, response.get_json()
    lead = response.get_json()
    assert lead["status"] == "converted" and lead["converted_at"] is not None
    customer = client.get(f"/api/v1/customers/{lead['customer_id']}", headers=headers()).get_json()
    ticket = client.get(f"/api/v1/tickets/{lead['converted_ticket_id']}", headers=headers()).get_json()
    assert (customer["display_name"], customer["email"], customer["phone"]) == (
        "Cy Park",
        "cy@example.com",
        "+15555550102",
    )
    assert (ticket["subject"], ticket["customer_id"], ticket["status"]) == (
        "Screen quote",
        customer["id"],
        "New",
    )
    assert events() == [("customer.created", customer), ("ticket.created", ticket), ("lead.converted", lead)]
    assert client.get(f"{BASE}/6001", headers=headers()).get_json() == lead
    assert customer["source"] == "lead"  # the lead said nothing of where it came from


def test_the_converted_customer_keeps_where_the_lead_came_from(client, shop):
    made = client.post(BASE, json={"name": "Hal Ito", "source": "web_form"}, headers=headers()).get_json()
    lead = client.post(f"{BASE}/{made['id']}/convert", headers=headers()).get_json()
    customer = client.get(f"/api/v1/customers/{lead['customer_id']}", headers=headers()).get_json()
    assert customer["source"] == "web_form"


def test_convert_without_a_body_names_the_ticket_after_the_lead(client, shop):
    lead = client.post(f"{BASE}/6001/convert", headers=headers()).get_json()
    assert Ticket.get_by_id(int(lead["converted_ticket_id"])).subject == "Repair for Cy Park"


def test_convert_onto_an_existing_customer_and_ticket_creates_nothing_else(client, shop):
    lead = client.post(
        f"{BASE}/6001/convert", json={"customer_id": "1", "ticket_id": 1001}, headers=headers()
    ).get_json()
    assert (lead["customer_id"], lead["converted_ticket_id"]) == ("1", "1001")
    assert [kind for kind, _ in events()] == ["lead.converted"]


@pytest.mark.parametrize(
    "body, param",
    [
        ({"customer_id": "21"}, "customer_id"),
        ({"customer_id": "999"}, "customer_id"),
        ({"ticket_id": "1003"}, "ticket_id"),
        ({"ticket_id": "1004"}, "ticket_id"),
        ({"ticket_id": "2001"}, "ticket_id"),
    ],
    ids=[
        "another shop's customer",
        "no such customer",
        "a hidden ticket",
        "a deleted ticket",
        "another shop's ticket",
    ],
)
def test_convert_onto_records_outside_the_shop_is_404_with_nothing_written(client, shop, body, param):
    before = snapshot()
    assert_error(client.post(f"{BASE}/6001/convert", json=body, headers=headers()), 404, "not_found", param)
    assert snapshot() == before  # the customer it would have created is rolled back too


def test_convert_needs_only_leads_write(client, load):
    load(tenant_fixture("acme", scopes=["leads.write"], leads=[{"id": 6001, "name": "Cy"}]))
    response = client.post(f"{BASE}/6001/convert", headers=auth_headers("sk_test_acme_token_0001"))
    assert response.status_code == 200 and Customer.select().count() == 1 and Ticket.select().count() == 1


def test_scopes_and_other_shops(client, shop):
    for method, path in (("post", BASE), ("patch", f"{BASE}/6001"), ("post", f"{BASE}/6001/convert")):
        response = getattr(client, method)(path, json={"name": "X"}, headers=headers(READ_ONLY))
        assert assert_error(response, 403, "insufficient_scope")["details"] == {
            "required_scope": "leads.write"
        }
    for method, path in (("get", "/6001"), ("patch", "/6001"), ("post", "/6001/convert")):
        kwargs = {"json": {"name": "X"}} if method == "patch" else {}
        assert_error(
            getattr(client, method)(BASE + path, headers=headers(GLOBEX), **kwargs), 404, "not_found", "id"
        )
    assert Lead.get_by_id(6001).status == "new"


def test_an_idempotent_convert_replays_and_converts_once(client, shop):
    key = {"Idempotency-Key": "convert-6001"}
    first = client.post(f"{BASE}/6001/convert", headers=headers(**key))
    again = client.post(f"{BASE}/6001/convert", headers=headers(**key))
    assert first.status_code == again.status_code == 200 and first.get_json() == again.get_json()
    assert len(events("lead.converted")) == 1 and Customer.select().count() == 4


LONG = "x" * 256
BAD_BODIES = [
    ("missing name", {"email": "a@example.com"}, "missing_field", "name"),
    ("empty name", {"name": ""}, "invalid_field", "name"),
    ("null name", {"name": None}, "invalid_field", "name"),
    ("over-long name", {"name": LONG}, "invalid_field", "name"),
    ("array for name", {"name": ["A"]}, "invalid_field", "name"),
    ("NUL in name", {"name": "A\u0000"}, "invalid_field", "name"),
    ("not an email", {"name": "A", "email": "nope"}, "invalid_field", "email"),
    ("over-long phone", {"name": "A", "phone": "5" * 51}, "invalid_field", "phone"),
    ("over-long source", {"name": "A", "source": "x" * 65}, "invalid_field", "source"),
    ("number for source", {"name": "A", "source": 3}, "invalid_field", "source"),
    ("unknown status", {"name": "A", "status": "won"}, "invalid_field", "status"),
    ("unknown field", {"name": "A", "customer_id": "1"}, "invalid_field", "customer_id"),
]


@pytest.mark.parametrize("body, code, param", [c[1:] for c in BAD_BODIES], ids=[c[0] for c in BAD_BODIES])
def test_a_bad_create_body_is_refused(client, shop, body, code, param):
    before = snapshot()
    assert_error(client.post(BASE, json=body, headers=headers()), 400, code, param)
    assert snapshot() == before


PATCHES = [c for c in BAD_BODIES if c[2] != "missing_field"]


@pytest.mark.parametrize("body, code, param", [c[1:] for c in PATCHES], ids=[c[0] for c in PATCHES])
def test_a_bad_patch_body_is_refused(client, shop, body, code, param):
    before = snapshot()
    assert_error(client.patch(f"{BASE}/6001", json=body, headers=headers()), 400, code, param)
    assert snapshot() == before


BAD_CONVERTS = [
    ("customer id words", {"customer_id": "abc"}, "invalid_field", "customer_id"),
    ("customer id huge", {"customer_id": 2147483648}, "invalid_value", "customer_id"),
    ("ticket id array", {"ticket_id": [1001]}, "invalid_field", "ticket_id"),
    ("empty subject", {"subject": ""}, "invalid_field", "subject"),
    ("over-long subject", {"subject": LONG}, "invalid_field", "subject"),
    ("unknown field", {"status": "converted"}, "invalid_field", "status"),
]


@pytest.mark.parametrize("body, code, param", [c[1:] for c in BAD_CONVERTS], ids=[c[0] for c in BAD_CONVERTS])
def test_a_bad_convert_body_is_refused(client, shop, body, code, param):
    before = snapshot()
    assert_error(client.post(f"{BASE}/6001/convert", json=body, headers=headers()), 400, code, param)
    assert snapshot() == before


@pytest.mark.parametrize("raw", ["0", "x", "2147483648"], ids=lambda raw: f"id {raw}")
def test_bad_path_ids(client, shop, raw):
    assert_error(client.get(f"{BASE}/{raw}", headers=headers()), 400, "invalid_id", "id")
    assert_error(client.post(f"{BASE}/{raw}/convert", headers=headers()), 400, "invalid_id", "id")

"""POST /customers, GET and PATCH /customers/<id>: the customer and its customer.* events."""

import pytest

from shop.models import Customer, IdempotencyRecord
from tests.helpers import assert_error
from tests.helpers.records_api import (
    GLOBEX,
    READ_ONLY,
    events,
    headers,
    logged,
    other_shop,
    records_shop,
    snapshot,
)

BASE = "/api/v1/customers"
NEW = {
    "display_name": "Eve Stone",
    "email": "eve@example.com",
    "phone": "+15555550199",
    "sms_consent": True,
    "source": "walk_in",
}


@pytest.fixture
def shop(load):
    load(records_shop(), other_shop())


def test_create_answers_the_customer_and_emits_it_as_its_get_answers(client, shop):
    response = client.post(BASE, json=NEW, headers=headers())
    assert response.status_code == 201, response.get_json()
    created = response.get_json()
    assert created == {
        "object": "customer",
        "id": created["id"],
        "display_name": "Eve Stone",
        "email": "eve@example.com",
        "created_at": created["created_at"],
        "phone": "+15555550199",
        "sms_consent": True,
        "source": "walk_in",
        "updated_at": None,
    }
    assert created["id"].isdigit() and created["created_at"].endswith("Z")
    fetched = client.get(f"{BASE}/{created['id']}", headers=headers()).get_json()
    assert fetched == created
    assert events() == [("customer.created", created)]  # the API's events are not marked observed
    assert Customer.get_by_id(int(created["id"])).tenant_id == "acme"


def test_create_defaults_consent_to_false_and_takes_only_the_name(client, shop):
    created = client.post(BASE, json={"display_name": "Fay"}, headers=headers()).get_json()
    assert (created["email"], created["phone"], created["sms_consent"]) == (None, None, False)
    assert created["source"] is None


def test_the_new_customer_heads_the_list(client, shop):
    created = client.post(BASE, json=NEW, headers=headers()).get_json()
    listed = client.get(BASE, headers=headers()).get_json()
    assert listed["data"][0]["id"] == created["id"]
    assert [c["id"] for c in listed["data"]] == [created["id"], "1", "2"]


def test_patch_changes_the_fields_sent_and_emits_updated_once(client, shop):
    response = client.patch(
        f"{BASE}/1", json={"phone": "+15555550111", "sms_consent": True}, headers=headers()
    )
    assert response.status_code == 200
    updated = response.get_json()
    assert (updated["display_name"], updated["email"]) == ("Ann Lee", "ann@example.com")
    assert (updated["phone"], updated["sms_consent"]) == ("+15555550111", True)
    assert updated["updated_at"] is not None
    assert client.get(f"{BASE}/1", headers=headers()).get_json() == updated
    assert events() == [("customer.updated", updated)]
    # the same values again, or nothing at all: no change, no event, the same answer
    again = client.patch(f"{BASE}/1", json={"phone": "+15555550111"}, headers=headers()).get_json()
    assert again == updated
    assert client.patch(f"{BASE}/1", json={}, headers=headers()).get_json() == updated
    assert len(events()) == 1


def test_patch_can_clear_email_and_phone(client, shop):
    updated = client.patch(f"{BASE}/1", json={"email": None, "phone": None}, headers=headers()).get_json()
    assert (updated["email"], updated["phone"]) == (None, None)


def test_patch_sets_and_clears_where_the_customer_came_from(client, shop):
    updated = client.patch(f"{BASE}/1", json={"source": "referral"}, headers=headers()).get_json()
    assert updated["source"] == "referral" and Customer.get_by_id(1).source == "referral"
    assert events() == [("customer.updated", updated)]
    cleared = client.patch(f"{BASE}/1", json={"source": None}, headers=headers()).get_json()
    assert cleared["source"] is None


@pytest.mark.parametrize(
    "method, path",
    [("get", "/1"), ("patch", "/1"), ("get", "/21"), ("patch", "/21"), ("get", "/999"), ("patch", "/999")],
    ids=[
        "own get",
        "own patch",
        "another shop's get",
        "another shop's patch",
        "missing get",
        "missing patch",
    ],
)
def test_another_shops_customer_is_not_found(client, shop, method, path):
    kwargs = {"json": {"display_name": "X"}} if method == "patch" else {}
    response = getattr(client, method)(BASE + path, headers=headers(GLOBEX), **kwargs)
    if path == "/21":
        assert response.status_code == 200
        return
    assert_error(response, 404, "not_found", "id")
    assert Customer.get_by_id(1).display_name == "Ann Lee"


@pytest.mark.parametrize(
    "raw", ["0", "-1", "abc", "2147483648", "99999999999", "1.5", "%C2%B2"], ids=lambda raw: f"id {raw}"
)
def test_a_path_id_that_is_no_32_bit_positive_integer_is_invalid_id(client, shop, raw):
    assert_error(client.get(f"{BASE}/{raw}", headers=headers()), 400, "invalid_id", "id")
    assert_error(
        client.patch(f"{BASE}/{raw}", json={"phone": "1"}, headers=headers()), 400, "invalid_id", "id"
    )


def test_writes_need_customers_write_and_reads_customers_read(client, shop):
    error = assert_error(client.post(BASE, json=NEW, headers=headers(READ_ONLY)), 403, "insufficient_scope")
    assert error["details"] == {"required_scope": "customers.write"}
    error = assert_error(
        client.patch(f"{BASE}/1", json={"phone": "1"}, headers=headers(READ_ONLY)), 403, "insufficient_scope"
    )
    assert error["details"] == {"required_scope": "customers.write"}
    assert client.get(f"{BASE}/1", headers=headers(READ_ONLY)).status_code == 200
    assert Customer.select().count() == 3 and events() == []


def test_no_key_is_401(client, shop):
    assert_error(client.post(BASE, json=NEW), 401, "unauthorized")


def test_an_idempotent_retry_replays_the_first_answer_and_creates_once(client, shop):
    first = client.post(BASE, json=NEW, headers=headers(**{"Idempotency-Key": "cust-1"}))
    again = client.post(BASE, json=NEW, headers=headers(**{"Idempotency-Key": "cust-1"}))
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.get_json() == first.get_json()
    assert Customer.select().where(Customer.display_name == "Eve Stone").count() == 1
    assert len(events("customer.created")) == 1
    reused = client.post(BASE, json={**NEW, "phone": None}, headers=headers(**{"Idempotency-Key": "cust-1"}))
    assert_error(reused, 409, "idempotency_key_reuse", "Idempotency-Key")
    assert IdempotencyRecord.select().count() == 1


def test_writes_are_logged_and_carry_rate_limit_headers(client, shop):
    response = client.post(BASE, json=NEW, headers=headers())
    assert response.headers["RateLimit-Limit"] and "RateLimit-Remaining" in response.headers
    client.patch(f"{BASE}/999", json={"phone": "1"}, headers=headers())
    assert [row.status for row in logged("POST", "/api/v1/customers")] == [201]
    assert [row.status for row in logged("PATCH", "/api/v1/customers/<id>")] == [404]


LONG = "x" * 256
BAD_BODIES = [
    ("missing display_name", {"email": "a@example.com"}, "missing_field", "display_name"),
    ("null display_name", {"display_name": None}, "invalid_field", "display_name"),
    ("empty display_name", {"display_name": ""}, "invalid_field", "display_name"),
    ("over-long display_name", {"display_name": LONG}, "invalid_field", "display_name"),
    ("number for display_name", {"display_name": 5}, "invalid_field", "display_name"),
    ("array for display_name", {"display_name": ["Ann"]}, "invalid_field", "display_name"),
    ("object for email", {"display_name": "A", "email": {"a": 1}}, "invalid_field", "email"),
    ("not an email", {"display_name": "A", "email": "nobody"}, "invalid_field", "email"),
    ("over-long email", {"display_name": "A", "email": "a" * 320 + "@x.io"}, "invalid_field", "email"),
    ("over-long phone", {"display_name": "A", "phone": "5" * 51}, "invalid_field", "phone"),
    ("string for sms_consent", {"display_name": "A", "sms_consent": "true"}, "invalid_field", "sms_consent"),
    ("number for sms_consent", {"display_name": "A", "sms_consent": 1}, "invalid_field", "sms_consent"),
    ("NUL in display_name", {"display_name": "A\u0000B"}, "invalid_field", "display_name"),
    ("over-long source", {"display_name": "A", "source": "s" * 65}, "invalid_field", "source"),
    ("number for source", {"display_name": "A", "source": 7}, "invalid_field", "source"),
    ("array for source", {"display_name": "A", "source": ["walk_in"]}, "invalid_field", "source"),
    ("NUL in source", {"display_name": "A", "source": "walk\u0000in"}, "invalid_field", "source"),
    ("unknown field", {"display_name": "A", "nickname": "Al"}, "invalid_field", "nickname"),
    ("an id of its own", {"display_name": "A", "id": "5"}, "invalid_field", "id"),
]


@pytest.mark.parametrize("body, code, param", [c[1:] for c in BAD_BODIES], ids=[c[0] for c in BAD_BODIES])
def test_a_bad_create_body_is_refused_and_writes_nothing(client, shop, body, code, param):
    before = snapshot()
    assert_error(client.post(BASE, json=body, headers=headers()), 400, code, param)
    assert snapshot() == before


@pytest.mark.parametrize(
    "body, code, param",
    [({"display_name": None}, "invalid_field", "display_name")]
    + [(c[1], c[2], c[3]) for c in BAD_BODIES if c[2] != "missing_field"],
    ids=["null display_name"] + [c[0] for c in BAD_BODIES if c[2] != "missing_field"],
)
def test_a_bad_patch_body_is_refused_and_writes_nothing(client, shop, body, code, param):
    before = snapshot()
    assert_error(client.patch(f"{BASE}/1", json=body, headers=headers()), 400, code, param)
    assert snapshot() == before


@pytest.mark.parametrize(
    "data, content_type, status, code",
    [
        ("{not json", "application/json", 400, "invalid_json"),
        ("[1, 2]", "application/json", 400, "invalid_json"),
        ('"Ann"', "application/json", 400, "invalid_json"),
        ('{"display_name": "Ann"}', "text/plain", 415, "unsupported_media_type"),
        ('{"display_name": "Ann"}', "application/x-www-form-urlencoded", 415, "unsupported_media_type"),
    ],
    ids=["bad json", "an array", "a string", "text/plain", "a form"],
)
def test_a_body_that_is_no_json_object_is_refused(client, shop, data, content_type, status, code):
    before = snapshot()
    response = client.post(BASE, data=data, headers={**headers(), "Content-Type": content_type})
    assert_error(response, status, code)
    assert snapshot() == before

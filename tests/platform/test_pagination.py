"""The keyset paginator through GET /api/v1/customers: limits, cursors, stable order."""

from datetime import datetime, timedelta

import pytest

from shop.models import Customer
from tests.helpers import assert_error


@pytest.fixture
def customers(acme):
    """30 customers, several sharing one created_at so the tie-breaker matters."""
    base = datetime(2026, 11, 1, 12, 0, 0)
    for i in range(30):
        Customer.create(tenant="acme", display_name=f"C{i:02d}", created_at=base + timedelta(minutes=i // 3))
    return acme


def walk(client, headers, query="limit=7"):
    ids, cursor, pages = [], None, 0
    while True:
        url = f"/api/v1/customers?{query}" + (f"&cursor={cursor}" if cursor else "")
        body = client.get(url, headers=headers).get_json()
        ids += [item["id"] for item in body["data"]]
        pages += 1
        if not body["has_more"]:
            assert body["next_cursor"] is None
            return ids, pages
        cursor = body["next_cursor"]


def test_default_limit_is_25(client, customers):
    body = client.get("/api/v1/customers", headers=customers).get_json()
    assert body["object"] == "list" and len(body["data"]) == 25 and body["has_more"] is True


def test_walking_every_page_returns_each_record_once_newest_first(client, customers):
    ids, pages = walk(client, customers)
    assert pages == 5
    assert len(ids) == 30 and len(set(ids)) == 30
    rows = {str(c.id): c for c in Customer.select()}
    keys = [(rows[i].created_at, rows[i].id) for i in ids]
    assert keys == sorted(keys, reverse=True)


def test_records_added_between_pages_do_not_shift_the_walk(client, customers):
    first = client.get("/api/v1/customers?limit=10", headers=customers).get_json()
    Customer.create(tenant="acme", display_name="newest", created_at=datetime(2030, 1, 1))
    second = client.get(
        f"/api/v1/customers?limit=10&cursor={first['next_cursor']}", headers=customers
    ).get_json()
    assert not {i["id"] for i in first["data"]} & {i["id"] for i in second["data"]}
    assert "newest" not in [i["display_name"] for i in second["data"]]


@pytest.mark.parametrize("limit", ["0", "101", "-1", "abc", "1.5", "", "99999999999999999999"])
def test_limit_out_of_range_is_invalid_query(client, customers, limit):
    response = client.get(f"/api/v1/customers?limit={limit}", headers=customers)
    assert_error(response, 400, "invalid_query", param="limit")


@pytest.mark.parametrize(
    "limit",
    ["+2", " 2", "2 ", "1_0", "\uff12", "\u0662"],
    ids=["plus sign", "leading space", "trailing space", "underscore", "fullwidth 2", "arabic-indic 2"],
)
def test_limit_not_written_as_plain_digits_is_invalid_query(client, customers, limit):
    # int() takes all of these; the query grammar is ASCII digits only
    response = client.get("/api/v1/customers", query_string={"limit": limit}, headers=customers)
    assert_error(response, 400, "invalid_query", param="limit")


@pytest.mark.parametrize(
    "query", ["limit=1&limit=2", "limit[]=3", "limit[x]=3"], ids=["repeated", "array", "object"]
)
def test_arrays_or_objects_for_a_scalar_are_invalid_query(client, customers, query):
    assert_error(
        client.get(f"/api/v1/customers?{query}", headers=customers), 400, "invalid_query", param="limit"
    )


def test_limit_100_is_accepted(client, customers):
    assert client.get("/api/v1/customers?limit=100", headers=customers).status_code == 200


@pytest.mark.parametrize(
    "cursor", ["abc", "a.b", "", "x" * 3000, "eyJ4IjoxfQ.AAAA", "%00", "...", "a&cursor=b"]
)
def test_malformed_cursors_are_invalid_cursor(client, customers, cursor):
    response = client.get(f"/api/v1/customers?cursor={cursor}", headers=customers)
    assert_error(response, 400, "invalid_cursor", param="cursor")


def test_a_tampered_cursor_is_invalid(client, customers):
    cursor = client.get("/api/v1/customers?limit=5", headers=customers).get_json()["next_cursor"]
    body, signature = cursor.split(".")
    tampered = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1] + "." + signature
    response = client.get(f"/api/v1/customers?limit=5&cursor={tampered}", headers=customers)
    assert_error(response, 400, "invalid_cursor", param="cursor")


def test_a_cursor_is_bound_to_its_endpoint(client, app, customers):
    from shop.platform.pagination import encode_cursor

    with app.test_request_context("/api/v1/other-list"):
        foreign = encode_cursor(["2026-11-01T12:00:00", 5])
    response = client.get(f"/api/v1/customers?cursor={foreign}", headers=customers)
    assert_error(response, 400, "invalid_cursor", param="cursor")


def test_a_cursor_keeps_working_with_another_limit(client, customers):
    cursor = client.get("/api/v1/customers?limit=5", headers=customers).get_json()["next_cursor"]
    response = client.get(f"/api/v1/customers?limit=20&cursor={cursor}", headers=customers)
    assert response.status_code == 200 and len(response.get_json()["data"]) == 20


def test_a_cursor_does_not_expire(client, customers):
    from shop import clock

    cursor = client.get("/api/v1/customers?limit=5", headers=customers).get_json()["next_cursor"]
    clock.advance(400 * 86400)
    assert client.get(f"/api/v1/customers?limit=5&cursor={cursor}", headers=customers).status_code == 200

"""GET /api/v1/me and GET /api/v1/customers."""

from shop.models import Customer
from tests.helpers import ALL_SCOPES, auth_headers, tenant_fixture


def test_me_describes_the_calling_key(client, acme):
    body = client.get("/api/v1/me", headers=acme).get_json()
    assert body["object"] == "api_key"
    assert body["id"] == "key_acme" and body["tenant_id"] == "acme"
    assert body["mode"] == "test" and body["livemode"] is False
    assert body["scopes"] == sorted(ALL_SCOPES)
    assert "token" not in body and "token_hash" not in body


def test_me_needs_no_scope(client, load):
    load(tenant_fixture("acme", scopes=[]))
    assert client.get("/api/v1/me", headers=auth_headers("sk_test_acme_token_0001")).status_code == 200


def test_customers_are_isolated_per_tenant(client, load):
    acme = tenant_fixture("acme", customers=[{"id": 1, "display_name": "Ann", "email": "ann@x.test"}])
    globex = tenant_fixture("globex", customers=[{"id": 2, "display_name": "Gus", "email": "gus@x.test"}])
    load(acme, globex)
    body = client.get("/api/v1/customers", headers=auth_headers("sk_test_acme_token_0001")).get_json()
    assert [c["id"] for c in body["data"]] == ["1"]
    assert body["data"][0] == {
        "object": "customer",
        "id": "1",
        "display_name": "Ann",
        "email": "ann@x.test",
        "created_at": body["data"][0]["created_at"],
    }
    assert body["data"][0]["created_at"].endswith("Z")
    assert Customer.select().count() == 2


def test_fixture_timestamps_with_an_offset_are_stored_as_utc(client, load):
    load(
        tenant_fixture(
            "acme",
            customers=[
                {"id": 1, "display_name": "Ann", "created_at": "2026-10-01T10:00:00-04:00"},
                {"id": 2, "display_name": "Bo", "created_at": "2026-10-01T10:00:00"},
            ],
        )
    )
    body = client.get("/api/v1/customers", headers=auth_headers("sk_test_acme_token_0001")).get_json()
    stamps = {c["id"]: c["created_at"] for c in body["data"]}
    assert stamps == {"1": "2026-10-01T14:00:00.000Z", "2": "2026-10-01T10:00:00.000Z"}  # naive input is UTC

"""The `flask shop ...` commands: init-db, load (all or nothing), key create/list/revoke, activity --help."""

import json

import pytest

from shop.models import ApiKey, Customer, Tenant, Ticket, User
from tests.helpers import auth_headers, tenant_fixture


def write(tmp_path, document) -> str:
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(document))
    return str(path)


def test_init_db_is_idempotent(runner):
    for _ in range(2):
        result = runner.invoke(args=["shop", "init-db"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["initialized"] is True


def test_load_prints_tokens_it_generated_and_keeps_given_ids(runner, tmp_path, client):
    tenant = tenant_fixture(
        "acme",
        users=[{"id": 7, "email": "sam@acme.test", "name": "Sam"}],
        customers=[{"id": 41, "display_name": "Ann"}],
        tickets=[{"id": "1001", "customer_id": 41, "subject": "Screen"}],
    )
    tenant["api_keys"].append({"scopes": ["customers.read"], "mode": "live"})
    result = runner.invoke(args=["shop", "load", write(tmp_path, {"tenants": [tenant]})])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["tenants"] == ["acme"]
    generated = summary["api_keys"][1]
    assert generated["token"].startswith("sk_live_") and len(generated["token"]) > 40
    assert client.get("/api/v1/customers", headers=auth_headers(generated["token"])).status_code == 200
    assert User.get_by_id(7).email == "sam@acme.test"
    assert Ticket.get_by_id(1001).customer_id == 41
    assert generated["token"] not in json.dumps([k.token_hash for k in ApiKey.select()])


@pytest.mark.parametrize(
    "mutate, path",
    [
        (lambda t: t.update(colour="red"), "tenants[1].colour"),
        (lambda t: t["api_keys"][0].update(secret="x"), "tenants[1].api_keys[0].secret"),
        (lambda t: t["api_keys"][0].update(scopes=["teleport.write"]), "tenants[1].api_keys[0].scopes"),
        (lambda t: t.update(plan="platinum"), "tenants[1].plan"),
        (lambda t: t.update(timezone="Mars/Olympus"), "tenants[1].timezone"),
        (lambda t: t.update(customers=[{"id": 900}, {"id": 900}]), "tenants[1].customers[1]"),
        (lambda t: t.update(tickets=[{"id": "1", "customer_id": 99}]), "tenants[1].tickets[0].customer_id"),
        (lambda t: t.update(tickets=[{"id": "abc"}]), "tenants[1].tickets[0].id"),
    ],
    ids=[
        "unknown tenant key",
        "unknown key field",
        "unknown scope",
        "bad plan",
        "bad timezone",
        "duplicate customer id",
        "ticket of a missing customer",
        "non-numeric ticket id",
    ],
)
def test_load_is_all_or_nothing_and_names_the_bad_entry(runner, tmp_path, mutate, path):
    good = tenant_fixture("good", customers=[{"display_name": "Kept?"}])
    bad = tenant_fixture("bad")
    mutate(bad)
    result = runner.invoke(args=["shop", "load", write(tmp_path, {"tenants": [good, bad]})])
    assert result.exit_code != 0
    assert path in result.output
    assert Tenant.select().count() == 0 and Customer.select().count() == 0
    assert ApiKey.select().count() == 0


def test_load_rejects_a_file_that_is_not_json(runner, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{nope")
    result = runner.invoke(args=["shop", "load", str(path)])
    assert result.exit_code != 0 and "not valid JSON" in result.output


def test_key_create_then_revoke(runner, client, load):
    load(tenant_fixture("acme"))
    result = runner.invoke(
        args=["shop", "key", "create", "--tenant", "acme", "--scope", "customers.read", "--mode", "live"]
    )
    assert result.exit_code == 0, result.output
    created = json.loads(result.output)
    assert created["token"].startswith("sk_live_") and created["scopes"] == ["customers.read"]
    headers = auth_headers(created["token"])
    assert client.get("/api/v1/customers", headers=headers).status_code == 200
    assert runner.invoke(args=["shop", "key", "revoke", created["id"]]).exit_code == 0
    assert client.get("/api/v1/customers", headers=headers).status_code == 401


def test_key_create_for_an_unknown_tenant_fails(runner):
    result = runner.invoke(args=["shop", "key", "create", "--tenant", "nobody", "--scope", "customers.read"])
    assert result.exit_code != 0 and "nobody" in result.output


def test_key_revoke_of_an_unknown_key_fails(runner):
    assert runner.invoke(args=["shop", "key", "revoke", "key_nope"]).exit_code != 0


def test_bundled_demo_file_loads(runner):
    from importlib import resources

    text = resources.files("shop").joinpath("demo/demo_shop.json").read_text()
    from shop.domain.fixtures import load_fixture

    summary = load_fixture(json.loads(text))
    assert "acme" in summary["tenants"]


def test_key_list_prints_the_tenants_keys_without_secrets(runner, load):
    load(
        tenant_fixture("acme", token="sk_test_acme_listed_0001"),
        tenant_fixture("globex", customers=[{"id": 21}]),
    )
    created = json.loads(
        runner.invoke(
            args=["shop", "key", "create", "--tenant", "acme", "--scope", "tickets.read", "--mode", "live"]
        ).output
    )
    runner.invoke(args=["shop", "key", "revoke", "key_acme"])
    result = runner.invoke(args=["shop", "key", "list", "--tenant", "acme"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.output)
    assert [(k["id"], k["mode"], k["revoked"]) for k in listed] == [
        ("key_acme", "test", True),
        (created["id"], "live", False),
    ]
    assert listed[1]["scopes"] == ["tickets.read"] and listed[1]["expires_at"] is None
    assert set(listed[0]) == {"id", "mode", "scopes", "revoked", "expires_at", "created_at"}
    stored = ApiKey.get_by_id(created["id"])
    for secret in (created["token"], "sk_test_acme_listed_0001", stored.token_hash, stored.token_prefix):
        assert secret not in result.output


def test_key_list_of_an_unknown_tenant_is_an_error(runner):
    result = runner.invoke(args=["shop", "key", "list", "--tenant", "nobody"])
    assert result.exit_code == 1 and "No tenant nobody" in result.output


def test_key_create_without_a_scope_is_refused_unless_asked_for(runner, load):
    load(tenant_fixture("acme"))
    refused = runner.invoke(args=["shop", "key", "create", "--tenant", "acme"])
    assert refused.exit_code != 0 and "--scope" in refused.output and "--no-scopes" in refused.output
    assert ApiKey.select().count() == 1
    both = runner.invoke(
        args=["shop", "key", "create", "--tenant", "acme", "--no-scopes", "--scope", "tickets.read"]
    )
    assert both.exit_code != 0 and ApiKey.select().count() == 1
    asked = runner.invoke(args=["shop", "key", "create", "--tenant", "acme", "--no-scopes"])
    assert asked.exit_code == 0, asked.output
    assert json.loads(asked.output)["scopes"] == [] and ApiKey.select().count() == 2


def test_activity_help_lists_every_kind_the_command_dispatches_on(runner):
    from shop.domain.activity import ACTIVITIES

    result = runner.invoke(args=["shop", "activity", "--help"])
    assert result.exit_code == 0
    listed = result.output.split("KIND is one of:", 1)[1].split()
    assert listed == list(ACTIVITIES) and "estimate.declined" in listed and "notification" in listed

"""The `notification` activity and the fixture section that fill the inbox."""

import json

import pytest

from shop.domain.fixtures import FixtureError
from shop.models import Event, Notification
from tests.helpers import tenant_fixture

DESIGN_EXAMPLE = (
    '{"scope": "user", "user_email": "sam@acme.test", "type": "mention", "message": "Hi", '
    '"ticket_id": "1001"}'
)


@pytest.fixture
def shop(load):
    load(
        tenant_fixture("acme", users=[{"id": 7, "email": "sam@acme.test"}], tickets=[{"id": "1001"}]),
        tenant_fixture("globex", users=[{"id": 9, "email": "gus@globex.test"}], tickets=[{"id": "2001"}]),
    )


def activity(runner, data: str, tenant: str = "acme"):
    return runner.invoke(args=["shop", "activity", "notification", "--tenant", tenant, "--data", data])


def test_the_design_example_adds_a_user_notification(shop, runner, client):
    result = activity(runner, DESIGN_EXAMPLE)
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record == {
        "object": "notification",
        "id": record["id"],
        "scope": "user",
        "type": "mention",
        "message": "Hi",
        "ticket_id": "1001",
        "from_email": None,
        "read": False,
        "archived": False,
        "archived_at": None,
        "details": None,
        "created_at": record["created_at"],
    }
    row = Notification.get_by_id(record["id"])
    assert row.user_id == 7 and row.tenant_id == "acme" and row.ticket_id == 1001
    headers = {"Authorization": "Bearer sk_test_acme_token_0001"}
    listed = client.get("/api/v1/notifications?scope=user&user_email=sam@acme.test", headers=headers)
    assert [n["id"] for n in listed.get_json()["data"]] == [record["id"]]


def test_a_global_notification_without_a_ticket(shop, runner):
    result = activity(
        runner,
        '{"type": "sla_breach", "message": "Late", "from_email": "ops@acme.test", "details": {"hours": 26}}',
    )
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["scope"] == "global" and record["ticket_id"] is None and record["details"] == {"hours": 26}
    assert Notification.get_by_id(record["id"]).user_id is None


def test_a_notification_may_be_tied_to_a_hidden_ticket(load, runner):
    load(tenant_fixture("acme", tickets=[{"id": "1001", "hidden": True}]))
    result = activity(runner, '{"ticket_id": "1001"}')
    assert result.exit_code == 0, result.output
    assert Notification.select().count() == 1


@pytest.mark.parametrize(
    "data, message",
    [
        ('{"scope": "user", "message": "Hi"}', "user_email"),
        ('{"scope": "user", "user_email": "nobody@acme.test"}', "no teammate"),
        ('{"scope": "user", "user_email": "gus@globex.test"}', "no teammate"),
        ('{"user_email": "sam@acme.test"}', "only user-scoped"),
        ('{"scope": "team"}', "scope"),
        ('{"ticket_id": "9999"}', "no ticket 9999"),
        ('{"ticket_id": "2001"}', "no ticket 2001"),
        ('{"ticket_id": 1001}', "ticket_id"),
        ('{"ticket_id": "abc"}', "ticket_id"),
        ('{"details": [1, 2]}', "details"),
        ('{"message": 5}', "message"),
        ('{"read": true}', "read"),
    ],
    ids=[
        "user scope without an email",
        "an unknown teammate",
        "another tenant's teammate",
        "an email on a global notification",
        "a bad scope",
        "an unknown ticket",
        "another tenant's ticket",
        "a ticket id as a number",
        "a ticket id that is not digits",
        "details not an object",
        "message not a string",
        "an unknown field",
    ],
)
def test_refused_activity_writes_nothing(shop, runner, data, message):
    result = activity(runner, data)
    assert result.exit_code != 0 and message in result.output, result.output
    assert Notification.select().count() == 0 and Event.select().count() == 0


def test_the_fixture_section_keeps_ids_flags_and_times(load):
    load(
        tenant_fixture(
            "acme",
            users=[{"id": 7, "email": "sam@acme.test"}],
            tickets=[{"id": "1001"}],
            notifications=[
                {
                    "id": 50,
                    "scope": "global",
                    "type": "new_ticket",
                    "message": "New ticket 1001",
                    "ticket_id": "1001",
                    "read": False,
                    "archived": False,
                    "details": {"priority": "high"},
                    "created_at": "2026-11-01T10:00:00.000Z",
                },
                {
                    "id": 51,
                    "scope": "user",
                    "user_email": "sam@acme.test",
                    "type": "mention",
                    "message": "You were mentioned",
                    "ticket_id": "1001",
                },
                {"id": 52, "archived": True, "created_at": "2026-11-01T12:00:00+02:00"},
            ],
        )
    )
    first, second, third = (Notification.get_by_id(i) for i in (50, 51, 52))
    assert (first.ticket_id, first.details, first.created_at.isoformat()) == (
        1001,
        {"priority": "high"},
        "2026-11-01T10:00:00",
    )
    assert second.scope == "user" and second.user_id == 7 and second.created_at is not None
    assert third.archived and third.read and third.archived_at.isoformat() == "2026-11-01T10:00:00"


def test_a_notification_added_after_fixture_ids_gets_an_id_past_them(load, runner):
    """A fixture's own ids move PostgreSQL's sequence, so the next row (constant SQL) does not collide."""
    load(tenant_fixture("acme", notifications=[{"id": 50, "type": "note"}, {"id": 51, "type": "note"}]))
    result = activity(runner, '{"scope": "global", "user_email": null, "type": "note", "ticket_id": null}')
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["id"] > 51 and Notification.select().count() == 3


@pytest.mark.parametrize(
    "entry, path",
    [
        ({"id": 50, "colour": "red"}, "tenants[0].notifications[0].colour"),
        ({"scope": "user", "user_email": "nobody@acme.test"}, "tenants[0].notifications[0].user_email"),
        ({"ticket_id": "4242"}, "tenants[0].notifications[0].ticket_id"),
        ({"archived_at": "2026-11-01T10:00:00Z"}, "tenants[0].notifications[0].archived_at"),
        ({"id": "50"}, "tenants[0].notifications[0].id"),
    ],
    ids=[
        "an unknown key",
        "an unknown teammate",
        "an unknown ticket",
        "archived_at on an active row",
        "an id as a string",
    ],
)
def test_a_bad_fixture_entry_is_named_and_nothing_is_loaded(load, entry, path):
    with pytest.raises(FixtureError) as caught:
        load(tenant_fixture("acme", users=[{"id": 7, "email": "sam@acme.test"}], notifications=[entry]))
    assert caught.value.path == path
    assert Notification.select().count() == 0

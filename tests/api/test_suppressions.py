"""The suppression list and the conversation routes: read, mark read, assign."""

import pytest

from shop.models import Conversation, Message, Suppression
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.messages import ANN_PHONE, send, shop_fixture

BASE = "/api/v1/messages/suppressions"


@pytest.fixture
def shop(load):
    load(
        shop_fixture(
            users=[{"id": 7, "email": "sam@acme.test"}],
            conversations=[
                {
                    "id": 10,
                    "customer_id": 1,
                    "messages": [
                        {"channel": "sms", "direction": "inbound", "body": "Hi"},
                        {"channel": "sms", "direction": "inbound", "body": "Hello?"},
                    ],
                }
            ],
        ),
        tenant_fixture("globex", users=[{"id": 9, "email": "gus@globex.test"}], conversations=[{"id": 20}]),
    )
    return auth_headers("sk_test_acme_token_0001")


def test_list_newest_first_and_by_channel(client, shop):
    body = client.get(BASE, headers=shop).get_json()
    assert body["object"] == "list" and [s["address"] for s in body["data"]] == [
        "+15555550199",
        "bounced@example.com",
    ]
    first = body["data"][1]
    assert set(first) == {"object", "id", "channel", "address", "reason", "created_at"}
    assert first["object"] == "message_suppression" and first["reason"] == "fixture"
    sms = client.get(f"{BASE}?channel=sms", headers=shop).get_json()["data"]
    assert [s["channel"] for s in sms] == ["sms"]


def test_add_is_201_then_200_with_the_same_row_and_blocks_sends(client, shop):
    created = client.post(BASE, json={"channel": "sms", "address": "+1 (555) 555-0100"}, headers=shop)
    assert created.status_code == 201
    row = created.get_json()
    assert (row["address"], row["reason"]) == (ANN_PHONE, "manual")
    again = client.post(BASE, json={"channel": "sms", "address": ANN_PHONE}, headers=shop)
    assert again.status_code == 200 and again.get_json() == row
    assert_error(
        send(client, shop, ticket_id="1001", channel="sms", content="x", to=ANN_PHONE), 422, "send_failed"
    )
    deleted = client.delete(f"{BASE}/{row['id']}", headers=shop)
    assert deleted.status_code == 200
    assert deleted.get_json() == {"object": "message_suppression", "id": row["id"], "deleted": True}
    assert send(client, shop, ticket_id="1001", channel="sms", content="x", to=ANN_PHONE).status_code == 202


def test_another_tenants_suppression_is_404(client, shop, load):
    other = Suppression.create(tenant="globex", channel="sms", address="+15555550123", reason="manual")
    assert_error(client.delete(f"{BASE}/{other.id}", headers=shop), 404, "not_found", "id")
    assert_error(client.delete(f"{BASE}/999999", headers=shop), 404, "not_found", "id")
    assert Suppression.get_or_none(Suppression.id == other.id) is not None


@pytest.mark.parametrize(
    "body,code,param",
    [
        ({"channel": "fax", "address": "x"}, "invalid_channel", "channel"),
        ({"address": ANN_PHONE}, "missing_field", "channel"),
        ({"channel": "sms"}, "missing_field", "address"),
        ({"channel": "sms", "address": ["+15555550100"]}, "invalid_field", "address"),
        ({"channel": "sms", "address": 15555550100}, "invalid_field", "address"),
        ({"channel": "sms", "address": "not a number"}, "invalid_field", "address"),
        ({"channel": "email", "address": "nobody"}, "invalid_field", "address"),
        ({"channel": "email", "address": "a@" + "b" * 330 + ".com"}, "invalid_field", "address"),
        ({"channel": "sms", "address": "+1555\u00005550100"}, "invalid_field", "address"),
        ({"channel": "sms", "address": ANN_PHONE, "reason": "manual"}, "invalid_field", "reason"),
    ],
    ids=[
        "unknown channel",
        "no channel",
        "no address",
        "address an array",
        "address a number",
        "phone not E.164",
        "email without a domain",
        "address too long",
        "address with NUL",
        "unknown field",
    ],
)
def test_bad_adds_are_400_and_write_nothing(client, shop, body, code, param):
    error = assert_error(client.post(BASE, json=body, headers=shop), 400, code, param)
    assert error and Suppression.select().count() == 2


def test_adds_need_json_and_the_write_scope(client, shop, load):
    response = client.post(
        BASE, data="channel=sms", headers=shop, content_type="application/x-www-form-urlencoded"
    )
    assert_error(response, 415, "unsupported_media_type")
    load(tenant_fixture("readonly", scopes=["messages.read"]))
    reader = auth_headers("sk_test_readonly_token_0001")
    assert_error(
        client.post(BASE, json={"channel": "sms", "address": ANN_PHONE}, headers=reader),
        403,
        "insufficient_scope",
    )
    assert client.get(BASE, headers=reader).status_code == 200


def test_mark_read_zeroes_the_unread_count(client, shop):
    assert client.get("/api/v1/messages/conversations/10", headers=shop).get_json()["unread_count"] == 2
    response = client.post("/api/v1/messages/conversations/10/read", headers=shop)
    assert response.status_code == 200 and response.get_json()["unread_count"] == 0
    assert Message.select().where(Message.read == False).count() == 0  # noqa: E712
    assert_error(client.post("/api/v1/messages/conversations/20/read", headers=shop), 404, "not_found", "id")


def test_assign_to_a_teammate_then_nobody(client, shop):
    path = "/api/v1/messages/conversations/10"
    assigned = client.patch(path, json={"assigned_user_id": 7}, headers=shop)
    assert assigned.status_code == 200 and assigned.get_json()["assigned_user_id"] == 7
    cleared = client.patch(path, json={"assigned_user_id": None}, headers=shop)
    assert cleared.get_json()["assigned_user_id"] is None


@pytest.mark.parametrize(
    "body,status,code,param",
    [
        ({"assigned_user_id": 9}, 404, "not_found", "assigned_user_id"),
        ({"assigned_user_id": 12345}, 404, "not_found", "assigned_user_id"),
        ({"assigned_user_id": "7"}, 400, "invalid_field", "assigned_user_id"),
        ({"assigned_user_id": True}, 400, "invalid_field", "assigned_user_id"),
        ({"assigned_user_id": 2**40}, 400, "invalid_value", "assigned_user_id"),
        ({"assigned_user_id": [7]}, 400, "invalid_field", "assigned_user_id"),
        ({}, 400, "missing_field", "assigned_user_id"),
    ],
    ids=["another shops teammate", "nobody", "a string", "a boolean", "huge", "an array", "missing"],
)
def test_bad_assignments_change_nothing(client, shop, body, status, code, param):
    assert_error(
        client.patch("/api/v1/messages/conversations/10", json=body, headers=shop), status, code, param
    )
    assert Conversation.get_by_id(10).assigned_user_id is None


def test_another_tenants_conversation_cannot_be_assigned(client, shop):
    response = client.patch("/api/v1/messages/conversations/20", json={"assigned_user_id": 7}, headers=shop)
    assert_error(response, 404, "not_found", "id")

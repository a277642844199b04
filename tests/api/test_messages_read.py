"""Reading conversations and messages: lists, filters, unread counts, ids, cursors, isolation."""

import base64
import json

import pytest
from flask import g

from shop.models import Tenant
from tests.helpers import assert_error, auth_headers, tenant_fixture


def conversations_fixture():
    return tenant_fixture(
        "acme",
        customers=[
            {"id": 1, "display_name": "Ann Lee", "email": "ann@example.com", "phone": "+15555550100"},
            {"id": 2, "display_name": "Bo Chen", "email": "bo@example.com"},
        ],
        conversations=[
            {
                "id": 10,
                "customer_id": 1,
                "assigned_user_id": 7,
                "created_at": "2026-11-01T09:00:00Z",
                "messages": [
                    {
                        "id": 100,
                        "channel": "sms",
                        "direction": "inbound",
                        "body": "Is it ready?",
                        "sender": "+15555550100",
                        "read": False,
                        "created_at": "2026-11-01T10:00:00.000Z",
                    },
                    {
                        "id": 101,
                        "channel": "email",
                        "direction": "outbound",
                        "subject": "Your repair",
                        "body": "It is ready.",
                        "sender": "sam@acme.test",
                        "sent_from_ticket_id": "1001",
                        "created_at": "2026-11-01T11:00:00.000Z",
                    },
                    {
                        "id": 102,
                        "channel": "sms",
                        "direction": "inbound",
                        "body": "Great",
                        "read": False,
                        "created_at": "2026-11-01T12:00:00.000Z",
                    },
                    {
                        "id": 103,
                        "channel": "sms",
                        "direction": "inbound",
                        "body": "Seen",
                        "read": True,
                        "created_at": "2026-11-01T12:30:00.000Z",
                    },
                ],
            },
            {
                "id": 11,
                "customer_id": 2,
                "created_at": "2026-11-02T09:00:00Z",
                "messages": [
                    {
                        "id": 110,
                        "channel": "portal",
                        "direction": "inbound",
                        "body": "Hello",
                        "created_at": "2026-11-02T09:30:00.000Z",
                    }
                ],
            },
            {"id": 12, "customer_id": 1, "created_at": "2026-10-01T09:00:00Z"},
        ],
    )


@pytest.fixture
def inbox(load):
    load(conversations_fixture(), tenant_fixture("globex", conversations=[{"id": 20}]))
    return auth_headers("sk_test_acme_token_0001")


def test_conversations_most_recently_updated_first_with_unread_counts(client, inbox):
    body = client.get("/api/v1/messages/conversations", headers=inbox).get_json()
    assert [c["id"] for c in body["data"]] == [11, 10, 12]
    first = {c["id"]: c for c in body["data"]}
    assert [first[i]["unread_count"] for i in (10, 11, 12)] == [2, 1, 0]
    assert first[10] == {
        "object": "conversation",
        "id": 10,
        "customer_id": 1,
        "customer_email": "ann@example.com",
        "customer_name": "Ann Lee",
        "last_inbound_at": "2026-11-01T12:30:00.000Z",
        "last_outbound_at": "2026-11-01T11:00:00.000Z",
        "unread_count": 2,
        "assigned_user_id": 7,
        "created_at": "2026-11-01T09:00:00.000Z",
        "updated_at": "2026-11-01T12:30:00.000Z",
    }


def test_messages_alias_lists_the_same(client, inbox):
    alias = client.get("/api/v1/messages", headers=inbox).get_json()
    assert [c["id"] for c in alias["data"]] == [11, 10, 12]


def test_customer_filter(client, inbox):
    body = client.get("/api/v1/messages/conversations?customer_id=1", headers=inbox).get_json()
    assert [c["id"] for c in body["data"]] == [10, 12]


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5", "2147483648", ""])
def test_bad_customer_id_is_invalid_id(client, inbox, value):
    response = client.get(f"/api/v1/messages/conversations?customer_id={value}", headers=inbox)
    assert_error(response, 400, "invalid_id", param="customer_id")


@pytest.mark.parametrize(
    "value",
    ["+1", " 1", "1 ", "1_0", "\uff11", "\u0661"],
    ids=["plus sign", "leading space", "trailing space", "underscore", "fullwidth 1", "arabic-indic 1"],
)
@pytest.mark.parametrize("path", ["/api/v1/messages/conversations", "/api/v1/messages"])
def test_customer_id_not_written_as_plain_digits_is_invalid_id(client, inbox, path, value):
    # int() takes all of these; like a path id, customer_id is ASCII digits only
    response = client.get(path, query_string={"customer_id": value}, headers=inbox)
    assert_error(response, 400, "invalid_id", param="customer_id")


@pytest.mark.parametrize(
    "query",
    ["customer_id=1&customer_id=2", "customer_id[]=1", "customer_id[a]=1"],
    ids=["repeated", "array", "object"],
)
def test_customer_id_as_array_or_object_is_invalid_query(client, inbox, query):
    response = client.get(f"/api/v1/messages/conversations?{query}", headers=inbox)
    assert_error(response, 400, "invalid_query", param="customer_id")


def test_conversation_and_its_messages_newest_first(client, inbox):
    conversation = client.get("/api/v1/messages/conversations/10", headers=inbox).get_json()
    assert conversation["unread_count"] == 2
    body = client.get("/api/v1/messages/conversations/10/messages?limit=2", headers=inbox).get_json()
    assert [m["id"] for m in body["data"]] == [103, 102] and body["has_more"] is True
    rest = client.get(
        f"/api/v1/messages/conversations/10/messages?limit=2&cursor={body['next_cursor']}", headers=inbox
    ).get_json()
    assert [m["id"] for m in rest["data"]] == [101, 100] and rest["has_more"] is False


def test_message_fields(client, inbox):
    message = client.get("/api/v1/messages/101", headers=inbox).get_json()
    assert message == {
        "object": "message",
        "id": 101,
        "conversation_id": 10,
        "channel": "email",
        "direction": "outbound",
        "body": "It is ready.",
        "subject": "Your repair",
        "sender": "sam@acme.test",
        "sent_from_ticket_id": "1001",
        "external_uuid": None,
        "in_reply_to": None,
        "media_urls": None,
        "attachments": None,
        "to": None,
        "delivery_status": "sent",
        "delivery_error": None,
        "full_body": None,
        "created_at": "2026-11-01T11:00:00.000Z",
    }


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/messages/conversations/20",
        "/api/v1/messages/conversations/999",
        "/api/v1/messages/999",
        "/api/v1/messages/conversations/20/messages",
    ],
    ids=[
        "another tenant's conversation",
        "missing conversation",
        "missing message",
        "another tenant's messages",
    ],
)
def test_missing_or_foreign_records_are_404(client, inbox, path):
    assert_error(client.get(path, headers=inbox), 404, "not_found", "id")


@pytest.mark.parametrize("raw", ["0", "abc", "2147483648", "-5", "1.0"])
@pytest.mark.parametrize(
    "template",
    [
        "/api/v1/messages/conversations/{}",
        "/api/v1/messages/{}",
        "/api/v1/messages/conversations/{}/messages",
    ],
)
def test_bad_ids_are_invalid_id(client, inbox, template, raw):
    assert_error(client.get(template.format(raw), headers=inbox), 400, "invalid_id", param="id")


def test_a_cursor_of_another_endpoint_is_invalid(client, inbox):
    cursor = client.get("/api/v1/messages/conversations?limit=1", headers=inbox).get_json()["next_cursor"]
    response = client.get(f"/api/v1/messages/conversations/10/messages?cursor={cursor}", headers=inbox)
    assert_error(response, 400, "invalid_cursor", param="cursor")


def test_a_cursor_with_other_filters_is_invalid(client, inbox):
    cursor = client.get("/api/v1/messages/conversations?limit=1", headers=inbox).get_json()["next_cursor"]
    response = client.get(f"/api/v1/messages/conversations?customer_id=1&cursor={cursor}", headers=inbox)
    assert_error(response, 400, "invalid_cursor", param="cursor")


def _signed_cursor(app, path: str, values: list) -> str:
    """A correctly signed cursor for `path` carrying `values` (what only the server can make)."""
    from shop.platform.pagination import _b64, _sign, encode_cursor

    with app.test_request_context(path):
        g.tenant = Tenant.get_by_id("acme")
        scope = json.loads(base64.urlsafe_b64decode(encode_cursor(values).split(".")[0] + "=="))[0]
        payload = json.dumps([scope, values], separators=(",", ":")).encode()
        return f"{_b64(payload)}.{_sign(payload)}"


def test_an_impossible_calendar_value_in_a_cursor_is_invalid(client, app, inbox):
    path = "/api/v1/messages/conversations?limit=1"
    possible = _signed_cursor(app, path, ["2026-11-01T12:30:00", 10])
    assert client.get(f"{path}&cursor={possible}", headers=inbox).status_code == 200
    impossible = _signed_cursor(app, path, ["2026-02-30T10:00:00", 10])
    assert_error(
        client.get(f"{path}&cursor={impossible}", headers=inbox), 400, "invalid_cursor", param="cursor"
    )


def test_a_cursor_of_one_conversation_is_invalid_for_another(client, inbox):
    cursor = client.get("/api/v1/messages/conversations/10/messages?limit=1", headers=inbox).get_json()[
        "next_cursor"
    ]
    response = client.get(f"/api/v1/messages/conversations/12/messages?cursor={cursor}", headers=inbox)
    assert_error(response, 400, "invalid_cursor", param="cursor")


def test_a_cursor_of_another_tenant_is_invalid(client, load):
    load(
        conversations_fixture(),
        tenant_fixture(
            "globex", token="sk_test_globex_token_0001", conversations=[{"id": 20 + i} for i in range(3)]
        ),
    )
    cursor = client.get(
        "/api/v1/messages/conversations?limit=1", headers=auth_headers("sk_test_globex_token_0001")
    ).get_json()["next_cursor"]
    response = client.get(
        f"/api/v1/messages/conversations?cursor={cursor}", headers=auth_headers("sk_test_acme_token_0001")
    )
    assert_error(response, 400, "invalid_cursor", param="cursor")


@pytest.mark.parametrize(
    "values",
    [
        ["2026-11-01T12:30:00", 2**63],
        ["2026-11-01T12:30:00+02:00", 10],
        ["2026-11-01T12:30:00", -(2**63) - 1],
    ],
)
def test_a_signed_cursor_with_values_no_row_can_have_is_invalid(client, app, inbox, values):
    path = "/api/v1/messages/conversations?limit=1"
    assert_error(
        client.get(f"{path}&cursor={_signed_cursor(app, path, values)}", headers=inbox),
        400,
        "invalid_cursor",
        param="cursor",
    )


def test_reading_needs_messages_read(client, load):
    load(tenant_fixture("acme", scopes=["messages.write"]))
    response = client.get("/api/v1/messages/conversations", headers=auth_headers("sk_test_acme_token_0001"))
    assert_error(response, 403, "insufficient_scope")
    assert response.get_json()["error"]["details"] == {"required_scope": "messages.read"}

"""A loaded conversation's timestamps agree with its messages, as GET /api/v1/messages/conversations shows."""

import json
from importlib import resources

import pytest

from shop import clock
from shop.domain.fixtures import FixtureError, load_fixture
from tests.helpers import DESIGN_FIXTURE, auth_headers, tenant_fixture

DEMO_TOKEN = "sk_test_acme_demo_0001"


def every_page(client, path: str, headers: dict) -> list[dict]:
    items, cursor = [], None
    while True:
        page = client.get(path + (f"&cursor={cursor}" if cursor else ""), headers=headers).get_json()
        items += page["data"]
        if not page["has_more"]:
            return items
        cursor = page["next_cursor"]


def assert_timestamps_agree(client, headers: dict) -> int:
    """Check every conversation against its messages; returns how many conversations there were."""
    conversations = every_page(client, "/api/v1/messages/conversations?limit=2", headers)
    for conversation in conversations:
        path = f"/api/v1/messages/conversations/{conversation['id']}/messages?limit=2"
        stamps = {}
        messages = every_page(client, path, headers)
        for message in messages:
            stamps.setdefault(message["direction"], []).append(message["created_at"])
        newest = max(m["created_at"] for m in messages)
        assert conversation["created_at"] <= min(m["created_at"] for m in messages), conversation
        assert conversation["updated_at"] == newest, conversation
        assert conversation["last_inbound_at"] == max(stamps.get("inbound", []), default=None)
        assert conversation["last_outbound_at"] == max(stamps.get("outbound", []), default=None)
    assert [c["updated_at"] for c in conversations] == sorted(
        (c["updated_at"] for c in conversations), reverse=True
    )
    return len(conversations)


def test_the_demo_conversations_agree_with_their_messages(client):
    load_fixture(json.loads(resources.files("shop").joinpath("demo/demo_shop.json").read_text()))
    assert assert_timestamps_agree(client, auth_headers(DEMO_TOKEN)) >= 2


def test_the_design_fixture_conversation_agrees_with_its_messages(client):
    document = json.loads(DESIGN_FIXTURE.read_text())
    document["tenants"][0]["api_keys"][0]["scopes"].append("messages.read")
    load_fixture(document)
    headers = auth_headers(DEMO_TOKEN)
    assert assert_timestamps_agree(client, headers) == 1
    conversation = client.get("/api/v1/messages/conversations/10", headers=headers).get_json()
    assert conversation["created_at"] == "2026-11-01T10:00:00.000Z"
    assert conversation["updated_at"] == "2026-11-01T11:00:00.000Z"


def test_a_given_created_at_is_kept_and_one_without_messages_is_the_load_time(client, load):
    load(
        tenant_fixture(
            "acme",
            conversations=[
                {
                    "id": 10,
                    "created_at": "2026-10-01T08:00:00Z",
                    "messages": [
                        {"channel": "sms", "direction": "inbound", "created_at": "2026-10-02T08:00:00Z"}
                    ],
                },
                {"id": 11},
            ],
        )
    )
    headers = auth_headers("sk_test_acme_token_0001")
    first = client.get("/api/v1/messages/conversations/10", headers=headers).get_json()
    assert (first["created_at"], first["updated_at"]) == (
        "2026-10-01T08:00:00.000Z",
        "2026-10-02T08:00:00.000Z",
    )
    empty = client.get("/api/v1/messages/conversations/11", headers=headers).get_json()
    assert empty["created_at"] == empty["updated_at"] <= clock.isoformat(clock.now())


def test_a_created_at_after_the_first_message_is_refused(load):
    conversation = {
        "id": 10,
        "created_at": "2026-11-03T00:00:00Z",
        "messages": [{"channel": "sms", "direction": "inbound", "created_at": "2026-11-02T00:00:00Z"}],
    }
    with pytest.raises(FixtureError) as refused:
        load(tenant_fixture("acme", conversations=[conversation]))
    assert "tenants[0].conversations[0].created_at" in str(refused.value)

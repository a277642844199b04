"""In-app activity: inbound messages land in conversations and emit message.received."""

import json

import pytest

from shop.domain.messaging.inbound import CUSTOMER_THREAD_SQL
from shop.models import Conversation, Event, Message
from tests.helpers import tenant_fixture
from tests.helpers.query_plans import sqlite_plan


@pytest.fixture
def shop(load):
    load(
        tenant_fixture(
            "acme",
            customers=[
                {"id": 1, "display_name": "Ann", "email": "ann@example.com"},
                {"id": 2, "display_name": "Bo"},
            ],
            conversations=[{"id": 10, "customer_id": 1}],
        ),
        tenant_fixture("globex", conversations=[{"id": 20}]),
    )


def activity(runner, data, tenant="acme"):
    return runner.invoke(
        args=["shop", "activity", "message.received", "--tenant", tenant, "--data", json.dumps(data)]
    )


def test_inbound_message_bumps_unread_and_emits_message_received(client, runner, shop):
    result = activity(
        runner,
        {
            "conversation_id": 10,
            "channel": "email",
            "body": "Thanks",
            "subject": "Re: repair",
            "sender": "ann@example.com",
        },
    )
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert (
        record["object"] == "message" and record["direction"] == "inbound" and record["conversation_id"] == 10
    )
    conversation = Conversation.get_by_id(10)
    assert (
        conversation.last_inbound_at is not None and conversation.updated_at == conversation.last_inbound_at
    )
    event = Event.get(Event.type == "message.received")
    assert event.data == {**record, "source_kind": "observed"}
    headers = {"Authorization": "Bearer sk_test_acme_token_0001"}
    assert client.get("/api/v1/messages/conversations/10", headers=headers).get_json()["unread_count"] == 1


def test_inbound_for_a_known_customer_creates_the_conversation(runner, shop):
    result = activity(runner, {"customer_id": 2, "channel": "sms", "body": "Hello?", "sender": "+15550001"})
    assert result.exit_code == 0, result.output
    assert Conversation.select().where(Conversation.customer == 2).count() == 1


@pytest.mark.parametrize(
    "data",
    [
        {"conversation_id": 20, "channel": "sms", "body": "x"},
        {"conversation_id": 999, "channel": "sms", "body": "x"},
        {"customer_id": 999, "channel": "sms", "body": "x"},
        {"conversation_id": 10, "channel": "fax", "body": "x"},
        {"conversation_id": 10, "channel": "sms"},
    ],
    ids=[
        "another tenant's conversation",
        "missing conversation",
        "unknown customer",
        "bad channel",
        "no body",
    ],
)
def test_refused_inbound_records_nothing(runner, shop, data):
    assert activity(runner, data).exit_code != 0
    assert Message.select().count() == 0 and Event.select().count() == 0


@pytest.mark.sqlite_only  # the plan's words are SQLite's; PostgreSQL's planner scans a table this small
@pytest.mark.parametrize(
    ("channel", "address", "index"),
    [
        ("sms", "+15550001", "customer_tenant_id_phone"),
        ("email", "ann@example.com", "customer_tenant_id_lower_email"),
    ],
)
def test_the_sender_is_found_through_the_shop_and_address_index(shop, channel, address, index):
    """The customer an inbound SMS or email comes from is looked up by the index on (tenant, phone)
    or (tenant, LOWER(email)), not by reading every customer of the shop (migration 18)."""
    plan = sqlite_plan(CUSTOMER_THREAD_SQL[channel], {"tenant": "acme", "address": address})
    assert f"INDEX {index} " in plan, plan

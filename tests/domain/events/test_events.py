"""The events outbox: emit() writes inside the caller's transaction and rolls back with it."""

import pytest

from shop.db import write_transaction
from shop.domain.events.outbox import emit, envelope
from shop.models import Event


def test_emit_writes_an_event_with_the_envelope_fields(acme):
    with write_transaction():
        event = emit("acme", "customer.created", {"object": "customer", "id": "1"})
    stored = Event.get_by_id(event.id)
    body = envelope(stored)
    assert body["object"] == "event" and body["api_version"] == "v1"
    assert body["id"].startswith("evt_") and len(body["id"]) > 20
    assert body["type"] == "customer.created" and body["data"] == {"object": "customer", "id": "1"}
    assert body["created"].endswith("Z")


def test_an_event_is_lost_with_the_change_that_rolled_back(acme):
    with pytest.raises(RuntimeError):
        with write_transaction():
            emit("acme", "customer.created", {"object": "customer", "id": "1"})
            raise RuntimeError("the change failed")
    assert Event.select().count() == 0


def test_event_ids_are_unique(acme):
    with write_transaction():
        ids = {emit("acme", "customer.updated", {}).id for _ in range(50)}
    assert len(ids) == 50

"""The records' API end to end: each route's event reaches a real HTTPS receiver once, signed, with
the data the route answered (the real consumer process; the backend does not matter here)."""

from collections import Counter

import pytest

from tests.e2e.test_webhook_delivery import TRUSTED, consumer_env, subscribe
from tests.helpers import tenant_fixture
from tests.helpers.processes import wait_until
from tests.helpers.webhook_receiver import WebhookReceiver, verify

pytestmark = pytest.mark.sqlite_only


@pytest.fixture
def shop(load, app, monkeypatch):
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", TRUSTED)
    load(tenant_fixture("acme", users=[{"id": 7, "email": "sam@acme.test"}]))
    return {"Authorization": "Bearer sk_test_acme_token_0001"}


def call(client, headers, method: str, path: str, body=None) -> dict:
    response = getattr(client, method)(f"/api/v1{path}", headers=headers, json=body)
    assert response.status_code in (200, 201), response.get_data(as_text=True)
    return response.get_json()


def test_every_records_route_delivers_its_events_once_with_the_answered_data(
    client, shop, tmp_path, start_consumer
):
    with WebhookReceiver(tmp_path) as receiver:
        sub = subscribe(client, shop, receiver)
        start_consumer(**consumer_env(receiver))
        customer = call(
            client, shop, "post", "/customers", {"display_name": "Ann", "email": "ann@example.com"}
        )
        customer_after = call(
            client, shop, "patch", f"/customers/{customer['id']}", {"phone": "+15555550100"}
        )
        ticket = call(client, shop, "post", "/tickets", {"subject": "Screen", "customer_id": customer["id"]})
        moved = call(client, shop, "patch", f"/tickets/{ticket['id']}", {"status": "Ready"})
        edited = call(client, shop, "patch", f"/tickets/{ticket['id']}", {"assigned_user_id": 7})
        lead = call(client, shop, "post", "/leads", {"name": "Cy", "email": "cy@example.com"})
        lead_after = call(client, shop, "patch", f"/leads/{lead['id']}", {"status": "qualified"})
        converted = call(client, shop, "post", f"/leads/{lead['id']}/convert", {"subject": "Quote"})
        new_customer = call(client, shop, "get", f"/customers/{converted['customer_id']}")
        new_ticket = call(client, shop, "get", f"/tickets/{converted['converted_ticket_id']}")
        wait_until(lambda: len(receiver.events()) >= 10, timeout=30)
        received = receiver.events()
    for item in received:
        assert verify(item["headers"]["Service-Signature"], item["raw"], [sub["signing_secret"]])
    assert len({item["body"]["id"] for item in received}) == len(received) == 10
    by_type: dict = {}
    for item in received:
        by_type.setdefault(item["body"]["type"], []).append(item["body"]["data"])
    assert Counter({kind: len(datas) for kind, datas in by_type.items()}) == {
        "customer.created": 2,
        "customer.updated": 1,
        "ticket.created": 2,
        "ticket.status_changed": 1,
        "ticket.updated": 1,
        "lead.created": 1,
        "lead.updated": 1,
        "lead.converted": 1,
    }
    assert sorted(by_type["customer.created"], key=lambda d: d["id"]) == [customer, new_customer]
    assert by_type["customer.updated"] == [customer_after]
    assert sorted(by_type["ticket.created"], key=lambda d: d["id"]) == [ticket, new_ticket]
    assert by_type["ticket.updated"] == [edited]
    assert by_type["ticket.status_changed"] == [
        {
            "object": "ticket",
            "id": ticket["id"],
            "status": "Ready",
            "previous_status": "New",
            "changed_at": moved["updated_at"],
            "changed_by": "key_acme",
            "change_source": "api",
            "source_kind": "observed",
        }
    ]
    assert (by_type["lead.created"], by_type["lead.updated"]) == ([lead], [lead_after])
    assert by_type["lead.converted"] == [converted]

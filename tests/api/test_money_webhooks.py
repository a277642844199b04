"""End to end: every estimate, invoice, payment and refund route's event reaches a real HTTPS webhook
receiver once, signed, with the data the route answered (or its lean payload)."""

import pytest

from shop.domain.webhooks import engine
from shop.models import WebhookDelivery
from tests.helpers.money import ACME, ITEMS, TOTAL, acme_fixture, post
from tests.helpers.webhook_receiver import verify


@pytest.fixture
def shop(load, app, monkeypatch):
    monkeypatch.setitem(app.config, "WEBHOOK_TRUSTED_NETWORKS", "127.0.0.0/8")
    load(acme_fixture())
    return ACME


def deliver_everything(app) -> None:
    """Attempt every pending delivery now, in this process (no consumer runs here)."""
    pending = WebhookDelivery.select(WebhookDelivery.id).where(WebhookDelivery.status == "pending")
    for delivery_id in [row.id for row in pending.order_by(WebhookDelivery.created_at)]:
        if WebhookDelivery.get_by_id(delivery_id).status == "pending":
            engine.attempt_batch(delivery_id, app.config)


def test_every_money_event_arrives_once_with_the_routes_data(client, shop, app, start_receiver):
    receiver = start_receiver()
    subscription = post(client, "/api/v1/webhooks", {"url": receiver.hook_url(), "events": ["*"]})
    estimate = post(client, "/api/v1/estimates", {"ticket_id": "1001", "line_items": ITEMS})
    sent_estimate = post(client, f"/api/v1/estimates/{estimate['id']}/send", status=200)
    approved = post(client, f"/api/v1/estimates/{estimate['id']}/approve", status=200)
    other = post(client, "/api/v1/estimates", {"ticket_id": "1002", "line_items": ITEMS})
    post(client, f"/api/v1/estimates/{other['id']}/send", status=200)
    declined = post(client, f"/api/v1/estimates/{other['id']}/decline", {"reason": "Later"}, status=200)
    created = post(client, "/api/v1/invoices", {"ticket_id": "1001", "line_items": ITEMS})
    sent_invoice = post(client, f"/api/v1/invoices/{created['id']}/send", status=200)
    payment = post(
        client, "/api/v1/payments", {"invoice_id": created["id"], "amount": TOTAL, "method": "card"}
    )
    paid = client.get(f"/api/v1/invoices/{created['id']}", headers=shop).get_json()
    refund = post(
        client, "/api/v1/refunds", {"payment_id": payment["id"], "amount": 500, "reason": "Scratch"}
    )
    refunded = client.get(f"/api/v1/invoices/{created['id']}", headers=shop).get_json()
    doomed = post(client, "/api/v1/invoices", {"customer_id": "2", "line_items": ITEMS})
    voided = post(client, f"/api/v1/invoices/{doomed['id']}/void", {"reason": "Duplicate"}, status=200)

    deliver_everything(app)

    received = receiver.events()
    for event in received:
        verify(event["headers"]["Service-Signature"], event["raw"], [subscription["signing_secret"]])
    assert len({event["body"]["id"] for event in received}) == len(received)  # each event once
    by_type = {}
    for event in received:
        by_type.setdefault(event["body"]["type"], []).append(event["body"]["data"])
    assert by_type["estimate.sent"][0] == sent_estimate
    assert by_type["estimate.approved"] == [
        {
            "object": "estimate",
            "id": estimate["id"],
            "ticket_id": "1001",
            "status": "approved",
            "approved_at": approved["approved_at"],
            "approved_by": "key_acme",
            "source_kind": "observed",
        }
    ]
    assert by_type["estimate.declined"][0]["declined_by"] == "key_acme"
    assert by_type["estimate.declined"][0]["decline_reason"] == declined["decline_reason"] == "Later"
    assert by_type["invoice.created"] == [created, doomed]
    assert by_type["invoice.sent"] == [sent_invoice]
    assert by_type["payment.recorded"] == [payment]
    assert by_type["invoice.paid"] == [paid]
    assert by_type["payment.refunded"] == [refund]
    assert by_type["invoice.refunded"] == [refunded]
    assert by_type["invoice.voided"] == [voided]
    assert sorted(by_type) == sorted(
        [
            "estimate.sent",
            "estimate.approved",
            "estimate.declined",
            "invoice.created",
            "invoice.sent",
            "payment.recorded",
            "invoice.paid",
            "payment.refunded",
            "invoice.refunded",
            "invoice.voided",
        ]
    )
    assert len(received) == 12  # two estimate.sent, two invoice.created, one of each other

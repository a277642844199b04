"""Fixture sections invoices, estimates, payments, refunds and leads; the demo shop's fixed examples."""

import json
from importlib import resources

import pytest

from shop.domain.fixtures import FixtureError, load_fixture
from shop.models import Customer, Estimate, Event, Invoice, Lead, Payment, Refund, Ticket
from tests.helpers import tenant_fixture
from tests.helpers.records import events, snapshot

BASE = dict(customers=[{"id": 1, "display_name": "Ann"}], tickets=[{"id": "1001", "customer_id": 1}])


def sections(**extra) -> dict:
    return {
        "tenants": [
            tenant_fixture("acme", **BASE, **extra),
            tenant_fixture("globex", customers=[{"id": 21}], tickets=[{"id": "2001"}]),
        ]
    }


def test_sections_load_with_their_ids_and_defaults():
    load_fixture(
        sections(
            invoices=[
                {
                    "id": 3001,
                    "ticket_id": "1001",
                    "status": "sent",
                    "total": 1000,
                    "created_at": "2026-11-01T10:00:00Z",
                }
            ],
            estimates=[{"id": "5001", "ticket_id": 1001, "status": "approved", "approved_by": "customer"}],
            payments=[{"id": 4001, "invoice_id": 3001, "amount": 600, "method": "card"}],
            refunds=[{"id": 4501, "payment_id": 4001, "amount": 100, "reason": "Goodwill"}],
            leads=[
                {
                    "id": 6001,
                    "name": "Cy",
                    "status": "converted",
                    "customer_id": 1,
                    "converted_ticket_id": "1001",
                },
                {"id": 6002, "name": "Di"},
            ],
        )
    )
    invoice, estimate = Invoice.get_by_id(3001), Estimate.get_by_id(5001)
    assert (invoice.customer_id, invoice.number, invoice.currency) == (1, "INV-3001", "usd")
    assert invoice.sent_at == invoice.created_at  # a status's timestamp defaults to created_at
    assert (estimate.customer_id, estimate.number, estimate.status) == (1, "EST-5001", "approved")
    assert estimate.approved_at is not None and estimate.declined_at is None
    assert (Payment.get_by_id(4001).amount, Refund.get_by_id(4501).amount) == (600, 100)
    assert Lead.get_by_id(6001).converted_at is not None and Lead.get_by_id(6002).status == "new"
    assert Event.select().count() == 0  # loading a fixture is not activity: no events


@pytest.mark.parametrize(
    "extra, path",
    [
        ({"invoices": [{"ticket_id": "2001"}]}, "tenants[0].invoices[0].ticket_id"),
        ({"invoices": [{"customer_id": 21}]}, "tenants[0].invoices[0].customer_id"),
        ({"invoices": [{"total": -5}]}, "tenants[0].invoices[0].total"),
        ({"invoices": [{"status": "overdue"}]}, "tenants[0].invoices[0].status"),
        ({"invoices": [{"currency": "US"}]}, "tenants[0].invoices[0].currency"),
        ({"invoices": [{"card_number": "4242424242424242"}]}, "tenants[0].invoices[0].card_number"),
        ({"estimates": [{"total": 5}]}, "tenants[0].estimates[0].ticket_id"),
        (
            {"estimates": [{"ticket_id": "1001", "decline_reason": "x" * 501}]},
            "tenants[0].estimates[0].decline_reason",
        ),
        (
            {"invoices": [{"id": 3001, "total": 100}], "payments": [{"invoice_id": 3001, "amount": 101}]},
            "tenants[0].payments[0].amount",
        ),
        ({"payments": [{"invoice_id": 3999, "amount": 1}]}, "tenants[0].payments[0].invoice_id"),
        (
            {
                "invoices": [{"id": 3001, "total": 100}],
                "payments": [{"id": 4001, "invoice_id": 3001, "amount": 50}],
                "refunds": [{"payment_id": 4001, "amount": 51}],
            },
            "tenants[0].refunds[0].amount",
        ),
        ({"leads": [{"status": "converted"}]}, "tenants[0].leads[0].converted_ticket_id"),
        ({"leads": [{"converted_ticket_id": "2001"}]}, "tenants[0].leads[0].converted_ticket_id"),
        ({"leads": [{"email": 5}]}, "tenants[0].leads[0].email"),
    ],
    ids=[
        "invoice on another tenant's ticket",
        "invoice for another tenant's customer",
        "negative total",
        "unknown invoice status",
        "currency not three letters",
        "unknown key",
        "estimate without ticket",
        "decline reason over 500",
        "payment over the amount due",
        "payment of a missing invoice",
        "refund over the payment",
        "converted lead without ticket",
        "lead converted to another tenant's ticket",
        "email a number",
    ],
)
def test_a_bad_entry_is_named_and_nothing_loads(extra, path):
    before = snapshot()
    with pytest.raises(FixtureError) as caught:
        load_fixture(sections(**extra))
    assert caught.value.path == path
    assert snapshot() == before


# DESIGN.md's fixed examples, verbatim
STATUS_EXAMPLE = (
    '{"id": "1001", "status": "Ready", "changed_by": "sam@acme.test", "change_source": "queue_drag"}'
)
DECLINE_EXAMPLE = (
    '{"id": "5001", "ticket_id": "1001", "declined_by": "customer", "decline_reason": "Too expensive"}'
)


def demo_activity(runner, *args):
    result = runner.invoke(args=["shop", "activity", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_the_fixed_examples_of_the_design_work_on_the_demo_shop(runner):
    load_fixture(json.loads(resources.files("shop").joinpath("demo/demo_shop.json").read_text()))
    demo_activity(runner, "ticket.status_changed", "--tenant", "acme", "--data", STATUS_EXAMPLE)
    demo_activity(runner, "estimate.declined", "--tenant", "acme", "--data", DECLINE_EXAMPLE)
    ticket, estimate = Ticket.get_by_id(1001), Estimate.get_by_id(5001)
    assert events() == [
        (
            "ticket.status_changed",
            {
                "object": "ticket",
                "id": "1001",
                "status": "Ready",
                "previous_status": "In Progress",
                "changed_at": _iso(ticket.updated_at),
                "changed_by": "sam@acme.test",
                "change_source": "queue_drag",
                "source_kind": "observed",
            },
        ),
        (
            "estimate.declined",
            {
                "object": "estimate",
                "id": "5001",
                "ticket_id": "1001",
                "status": "declined",
                "declined_at": _iso(estimate.declined_at),
                "declined_by": "customer",
                "decline_reason": "Too expensive",
                "source_kind": "observed",
            },
        ),
    ]


def test_the_demo_shop_exercises_every_record_kind(runner):
    load_fixture(json.loads(resources.files("shop").joinpath("demo/demo_shop.json").read_text()))
    demo_activity(runner, "estimate.approved", "--tenant", "acme", "--data", '{"id": "5002"}')
    demo_activity(runner, "invoice.paid", "--tenant", "acme", "--data", '{"id": "3001", "method": "card"}')
    demo_activity(runner, "lead.converted", "--tenant", "acme", "--data", '{"id": "6001"}')
    demo_activity(runner, "customer.updated", "--tenant", "acme", "--data", '{"id": 2, "sms_consent": true}')
    assert [t for t, _ in events()] == [
        "estimate.approved",
        "payment.recorded",
        "invoice.paid",
        "customer.created",
        "ticket.created",
        "lead.converted",
        "customer.updated",
    ]
    assert Customer.get_by_id(2).sms_consent is True


def _iso(value):
    from shop import clock

    return clock.isoformat(value)

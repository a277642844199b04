"""Refused activity: unknown tenant or record, another tenant's record, bad data, a state that forbids it.

Every refusal changes no row and emits no event.
"""

import json

import pytest

from shop.domain.activity import run_activity
from shop.models import Event
from shop.platform.errors import ApiError
from tests.helpers.records import snapshot

NOT_FOUND = [
    ("customer.updated", {"id": 999, "email": "x@example.com"}, "id"),
    ("ticket.updated", {"id": "999", "subject": "x"}, "id"),
    ("ticket.status_changed", {"id": "999", "status": "Ready"}, "id"),
    ("invoice.sent", {"id": 999}, "id"),
    ("invoice.paid", {"id": 999}, "id"),
    ("invoice.voided", {"id": 999}, "id"),
    ("invoice.refunded", {"id": 999}, "id"),
    ("estimate.sent", {"id": 999}, "id"),
    ("estimate.approved", {"id": 999}, "id"),
    ("estimate.declined", {"id": "999", "declined_by": "customer"}, "id"),
    ("estimate.declined", {"id": "999", "ticket_id": "999", "declined_by": "customer"}, "ticket_id"),
    ("payment.recorded", {"invoice_id": 999, "amount": 1}, "invoice_id"),
    ("payment.refunded", {"payment_id": 999}, "payment_id"),
    ("lead.updated", {"id": 999, "name": "x"}, "id"),
    ("lead.converted", {"id": 999}, "id"),
    ("ticket.created", {"customer_id": 999}, "customer_id"),
    ("invoice.created", {"ticket_id": 999}, "ticket_id"),
    ("estimate.sent", {"ticket_id": 999}, "ticket_id"),
]
NOT_FOUND_IDS = [f"{kind} on a missing record" for kind, _, _ in NOT_FOUND]

OTHER_TENANT = [
    ("customer.updated", {"id": 21, "email": "x@example.com"}, "id"),
    ("ticket.updated", {"id": "2001", "subject": "x"}, "id"),
    ("ticket.status_changed", {"id": "2001", "status": "Ready"}, "id"),
    ("invoice.sent", {"id": 3901}, "id"),
    ("invoice.paid", {"id": 3901}, "id"),
    ("invoice.voided", {"id": 3901}, "id"),
    ("invoice.refunded", {"id": 3901}, "id"),
    ("estimate.sent", {"id": 5901}, "id"),
    ("estimate.approved", {"id": 5901}, "id"),
    ("estimate.declined", {"id": 5901}, "id"),
    ("payment.recorded", {"invoice_id": 3901, "amount": 1}, "invoice_id"),
    ("payment.refunded", {"payment_id": 4901}, "payment_id"),
    ("lead.updated", {"id": 6901, "name": "x"}, "id"),
    ("lead.converted", {"id": 6901}, "id"),
    ("ticket.created", {"customer_id": 21}, "customer_id"),
    ("ticket.updated", {"id": "1001", "customer_id": 21}, "customer_id"),
    ("invoice.created", {"ticket_id": "2001"}, "ticket_id"),
    ("invoice.created", {"customer_id": 21}, "customer_id"),
    ("estimate.sent", {"ticket_id": "2001"}, "ticket_id"),
    ("lead.converted", {"id": 6001, "customer_id": 21}, "customer_id"),
    ("lead.converted", {"id": 6001, "ticket_id": "2001"}, "ticket_id"),
]
OTHER_TENANT_IDS = [f"{kind} naming globex's {param}" for kind, _, param in OTHER_TENANT]

HIDDEN = [
    ("ticket.status_changed", {"id": "1003", "status": "Ready"}, "id"),
    ("ticket.updated", {"id": "1003", "subject": "x"}, "id"),
    ("invoice.sent", {"id": 3003}, "id"),
    ("estimate.approved", {"id": 5003}, "id"),
    ("estimate.sent", {"ticket_id": "1003"}, "ticket_id"),
    ("invoice.created", {"ticket_id": "1003"}, "ticket_id"),
    ("estimate.declined", {"id": 5001, "ticket_id": "1002"}, "ticket_id"),
]
HIDDEN_IDS = [
    "status of a hidden ticket",
    "edit of a hidden ticket",
    "invoice of a hidden ticket",
    "estimate of a hidden ticket",
    "new estimate on a hidden ticket",
    "new invoice on a hidden ticket",
    "estimate named with the wrong ticket",
]

BAD_DATA = [
    ("ticket.status_changed", {"id": True, "status": "Ready"}, "invalid_field", "id"),
    ("ticket.status_changed", {"id": "abc", "status": "Ready"}, "invalid_field", "id"),
    ("ticket.status_changed", {"id": 0, "status": "Ready"}, "invalid_field", "id"),
    ("ticket.status_changed", {"id": "2147483648", "status": "Ready"}, "invalid_field", "id"),
    ("ticket.status_changed", {"id": 1.5, "status": "Ready"}, "invalid_field", "id"),
    ("ticket.status_changed", {"id": "1001"}, "missing_field", "status"),
    ("ticket.status_changed", {"id": "1001", "status": 5}, "invalid_field", "status"),
    ("ticket.status_changed", {"id": "1001", "status": ""}, "invalid_field", "status"),
    (
        "ticket.status_changed",
        {"id": "1001", "status": "Ready", "changed_by": ""},
        "invalid_field",
        "changed_by",
    ),
    (
        "ticket.status_changed",
        {"id": "1001", "status": "Ready", "changed_by": None},
        "invalid_field",
        "changed_by",
    ),
    ("ticket.updated", {"id": "1001", "status": "Ready"}, "invalid_field", "status"),
    ("customer.created", {"sms_consent": "true"}, "invalid_field", "sms_consent"),
    ("customer.created", {"email": "not-an-email"}, "invalid_field", "email"),
    ("customer.created", {"display_name": "x" * 256}, "invalid_field", "display_name"),
    ("customer.updated", {"email": "a@example.com"}, "missing_field", "id"),
    ("invoice.created", {"total": "10"}, "invalid_field", "total"),
    ("invoice.created", {"total": -1}, "invalid_field", "total"),
    ("invoice.created", {"total": True}, "invalid_field", "total"),
    ("invoice.created", {"currency": "USD"}, "invalid_field", "currency"),
    ("invoice.paid", {"id": 3001, "method": "bitcoin"}, "invalid_field", "method"),
    ("invoice.voided", {"id": 3002, "reason": "x" * 501}, "invalid_field", "reason"),
    ("payment.recorded", {"invoice_id": 3002}, "missing_field", "amount"),
    ("payment.recorded", {"invoice_id": 3002, "amount": 0}, "invalid_field", "amount"),
    ("payment.recorded", {"invoice_id": 3002, "amount": 1.5}, "invalid_field", "amount"),
    (
        "payment.recorded",
        {"invoice_id": 3002, "amount": 100, "card_number": "4242424242424242"},
        "invalid_field",
        "card_number",
    ),
    ("payment.refunded", {"payment_id": 4001, "amount": "all"}, "invalid_field", "amount"),
    ("estimate.declined", {"id": 5001, "decline_reason": "x" * 501}, "invalid_field", "decline_reason"),
    ("estimate.declined", {"id": 5001, "decline_reason": 7}, "invalid_field", "decline_reason"),
    ("estimate.approved", {"id": 5001, "approved_by": ["customer"]}, "invalid_field", "approved_by"),
    (
        "estimate.approved",
        {"id": 5001, "signature": "data:image/png;base64,AAAA"},
        "invalid_field",
        "signature",
    ),
    ("estimate.sent", {"id": 5002, "total": 100}, "invalid_field", "total"),
    ("estimate.sent", {"total": 100}, "missing_field", "ticket_id"),
    ("lead.updated", {"id": 6001, "status": "converted"}, "invalid_field", "status"),
    ("lead.created", {"phone": 5555550100}, "invalid_field", "phone"),
    ("customer.created", {"display_name": "Ann \ud800"}, "invalid_field", "display_name"),
    ("customer.created", {"display_name": "Ann \x00"}, "invalid_field", "display_name"),
]
BAD_DATA_IDS = [
    "id a boolean",
    "id not digits",
    "id zero",
    "id beyond 32 bits",
    "id a float",
    "status missing",
    "status a number",
    "status empty",
    "changed_by empty",
    "changed_by null",
    "status through ticket.updated",
    "sms_consent a string",
    "email malformed",
    "display_name too long",
    "update without id",
    "total a string",
    "total negative",
    "total a boolean",
    "currency upper-case",
    "unknown payment method",
    "void reason too long",
    "payment without amount",
    "payment of zero",
    "payment amount a float",
    "a card number is refused, never stored",
    "refund amount a string",
    "decline_reason over 500",
    "decline_reason a number",
    "approved_by a list",
    "an unknown signature key",
    "total when sending an existing estimate",
    "new estimate without ticket",
    "lead status converted by update",
    "phone a number",
    "text SQLite cannot store (a lone surrogate)",
    "text PostgreSQL cannot store (a NUL)",
]

STATE = [
    ("invoice.voided", {"id": 3001}, 422, "unprocessable", None),
    ("payment.recorded", {"invoice_id": 3001, "amount": 10901}, 422, "unprocessable", "amount"),
    ("payment.refunded", {"payment_id": 4001, "amount": 5001}, 422, "unprocessable", "amount"),
    ("invoice.refunded", {"id": 3002}, 422, "unprocessable", "amount"),
    ("customer.created", {"id": 1}, 409, "conflict", "id"),
    ("customer.created", {"id": 21}, 409, "conflict", "id"),
    ("ticket.created", {"id": "1001"}, 409, "conflict", "id"),
    ("invoice.created", {"id": 3001}, 409, "conflict", "id"),
    ("payment.recorded", {"id": 4001, "invoice_id": 3002, "amount": 1}, 409, "conflict", "id"),
    ("lead.created", {"id": 6001}, 409, "conflict", "id"),
]
STATE_IDS = [
    "void an invoice with payments",
    "pay more than is due",
    "refund more than was paid",
    "refund an invoice without payments",
    "create a customer with a taken id",
    "create a customer with another tenant's id",
    "create a ticket with a taken id",
    "create an invoice with a taken id",
    "record a payment with a taken id",
    "create a lead with a taken id",
]


def refused(kind: str, data: dict, tenant: str = "acme") -> ApiError:
    """Run the activity, expecting a refusal; prove it changed nothing and emitted nothing."""
    before = snapshot()
    with pytest.raises(ApiError) as caught:
        run_activity(kind, tenant, data)
    assert snapshot() == before and Event.select().count() == 0
    return caught.value


@pytest.mark.parametrize("kind, data, param", NOT_FOUND, ids=NOT_FOUND_IDS)
def test_a_missing_record_is_not_found(records, kind, data, param):
    error = refused(kind, data)
    assert (error.status, error.code, error.param) == (404, "not_found", param)


@pytest.mark.parametrize("kind, data, param", OTHER_TENANT, ids=OTHER_TENANT_IDS)
def test_another_tenants_record_is_not_found(records, kind, data, param):
    error = refused(kind, data)
    assert (error.status, error.code, error.param) == (404, "not_found", param)
    assert "globex" not in error.message


@pytest.mark.parametrize("kind, data, param", HIDDEN, ids=HIDDEN_IDS)
def test_hidden_tickets_and_their_records_are_not_found(records, kind, data, param):
    error = refused(kind, data)
    assert (error.status, error.code, error.param) == (404, "not_found", param)


@pytest.mark.parametrize("kind, data, code, param", BAD_DATA, ids=BAD_DATA_IDS)
def test_bad_data_is_refused(records, kind, data, code, param):
    error = refused(kind, data)
    assert (error.status, error.code, error.param) == (400, code, param)


@pytest.mark.parametrize("kind, data, status, code, param", STATE, ids=STATE_IDS)
def test_state_and_id_conflicts_are_refused(records, kind, data, status, code, param):
    error = refused(kind, data)
    assert (error.status, error.code, error.param) == (status, code, param)


def test_unknown_tenant_is_refused(records):
    error = refused("ticket.status_changed", {"id": "1001", "status": "Ready"}, tenant="nobody")
    assert (error.status, error.code) == (404, "not_found")


def test_the_command_reports_a_refusal_and_exits_non_zero(records, runner):
    before = snapshot()
    result = runner.invoke(
        args=[
            "shop",
            "activity",
            "estimate.declined",
            "--tenant",
            "acme",
            "--data",
            json.dumps({"id": "999", "ticket_id": "1999", "declined_by": "customer"}),
        ]
    )
    assert result.exit_code != 0 and "No ticket 1999" in result.output
    assert snapshot() == before and Event.select().count() == 0


def test_a_failure_after_the_first_event_rolls_everything_back(records):
    """lead.converted creates the customer (customer.created) before it finds the ticket missing."""
    error = refused("lead.converted", {"id": 6001, "ticket_id": "999"})
    assert (error.status, error.param) == (404, "ticket_id")

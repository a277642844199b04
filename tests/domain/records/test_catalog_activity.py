"""`flask shop activity` for the catalog's records: each kind's change and its exact event."""

import json

from shop import clock
from shop.models import Customer, Estimate, Event, Invoice, Lead, Payment, Refund, Ticket
from tests.helpers.records import activity, events, snapshot


def iso(value) -> str | None:
    return clock.isoformat(value)


# the ticket's fields of the records' API (issue 24), as a ticket the activity leaves them
TICKET_DEFAULTS = {
    "description": None,
    "device": None,
    "serial_number": None,
    "assigned_user_id": None,
    "priority": "normal",
    "due_at": None,
}


# customers


def test_customer_created_keeps_its_id_and_emits_the_customer(records, runner):
    record = activity(
        runner,
        "customer.created",
        {
            "id": 7,
            "display_name": "Dee",
            "email": "dee@example.com",
            "phone": "+15555550107",
            "sms_consent": True,
        },
    )
    customer = Customer.get_by_id(7)
    assert customer.tenant_id == "acme" and customer.sms_consent is True
    expected = {
        "object": "customer",
        "id": "7",
        "display_name": "Dee",
        "email": "dee@example.com",
        "created_at": iso(customer.created_at),
        "phone": "+15555550107",
        "sms_consent": True,
        "source": None,
        "updated_at": None,
    }
    assert record == expected
    assert events() == [("customer.created", {**expected, "source_kind": "observed"})]


def test_customer_updated_emits_only_for_a_real_change(records, runner):
    record = activity(runner, "customer.updated", {"id": "1", "email": "ann@new.example.com"})
    customer = Customer.get_by_id(1)
    assert customer.email == "ann@new.example.com" and customer.updated_at is not None
    assert record["email"] == "ann@new.example.com" and record["updated_at"] == iso(customer.updated_at)
    assert events() == [("customer.updated", {**record, "source_kind": "observed"})]
    activity(runner, "customer.updated", {"id": 1, "email": "ann@new.example.com", "display_name": "Ann Lee"})
    assert len(events()) == 1


# tickets


def test_ticket_created_emits_the_ticket(records, runner):
    record = activity(runner, "ticket.created", {"id": "1010", "customer_id": "1", "subject": "Water damage"})
    ticket = Ticket.get_by_id(1010)
    expected = {
        "object": "ticket",
        "id": "1010",
        "customer_id": "1",
        "subject": "Water damage",
        "status": "New",
        "created_at": iso(ticket.created_at),
        "updated_at": None,
        **TICKET_DEFAULTS,
    }
    assert record == expected
    assert events() == [("ticket.created", {**expected, "source_kind": "observed"})]


def test_ticket_updated_emits_for_fields_other_than_status(records, runner):
    record = activity(runner, "ticket.updated", {"id": "1001", "subject": "Cracked screen and camera"})
    ticket = Ticket.get_by_id(1001)
    assert ticket.subject == "Cracked screen and camera" and ticket.status == "In Progress"
    assert events() == [
        (
            "ticket.updated",
            {
                "object": "ticket",
                "id": "1001",
                "customer_id": "1",
                "subject": "Cracked screen and camera",
                "status": "In Progress",
                "created_at": iso(ticket.created_at),
                "updated_at": iso(ticket.updated_at),
                **TICKET_DEFAULTS,
                "source_kind": "observed",
            },
        )
    ]
    assert record == {k: v for k, v in events()[0][1].items() if k != "source_kind"}
    activity(runner, "ticket.updated", {"id": "1001", "subject": "Cracked screen and camera"})
    assert len(events()) == 1


def test_ticket_updated_refuses_a_status(records, runner):
    result = activity(runner, "ticket.updated", {"id": "1001", "status": "Ready"})
    assert result.exit_code != 0 and "status" in result.output
    assert Ticket.get_by_id(1001).status == "In Progress" and events() == []


def test_ticket_status_changed_is_the_lean_payload_exactly(records, runner):
    record = activity(
        runner,
        "ticket.status_changed",
        {
            "id": "1001",
            "status": "Ready",
            "changed_by": "sam@acme.test",
            "change_source": "queue_drag",
            "ip_address": "203.0.113.9",
            "user_agent": "Mozilla/5.0 (SecretBrowser)",
        },
    )
    ticket = Ticket.get_by_id(1001)
    assert ticket.status == "Ready" and record["status"] == "Ready"
    assert events() == [
        (
            "ticket.status_changed",
            {
                "object": "ticket",
                "id": "1001",
                "status": "Ready",
                "previous_status": "In Progress",
                "changed_at": iso(ticket.updated_at),
                "changed_by": "sam@acme.test",
                "change_source": "queue_drag",
                "source_kind": "observed",
            },
        )
    ]
    assert "203.0.113.9" not in Event.get().data.values() and "SecretBrowser" not in json.dumps(events())


def test_ticket_status_changed_defaults_its_actor_and_source(records, runner):
    activity(runner, "ticket.status_changed", {"id": 1002, "status": "In Progress"})
    data = events()[0][1]
    assert (data["previous_status"], data["changed_by"], data["change_source"]) == (
        "New",
        "system",
        "dashboard",
    )


def test_same_status_is_no_transition_and_emits_nothing(records, runner):
    before = snapshot()
    record = activity(runner, "ticket.status_changed", {"id": "1001", "status": "In Progress"})
    assert record["status"] == "In Progress"
    assert events() == [] and snapshot() == before


def test_each_real_transition_is_its_own_event(records, runner):
    for status in ("Ready", "Picked Up", "Ready"):
        activity(runner, "ticket.status_changed", {"id": "1001", "status": status})
    assert [(d["previous_status"], d["status"]) for _, d in events()] == [
        ("In Progress", "Ready"),
        ("Ready", "Picked Up"),
        ("Picked Up", "Ready"),
    ]


# invoices


def invoice_expected(invoice_id: int, **fields) -> dict:
    invoice = Invoice.get_by_id(invoice_id)
    base = {
        "object": "invoice",
        "id": str(invoice_id),
        "number": invoice.number,
        "customer_id": str(invoice.customer_id),
        "ticket_id": str(invoice.ticket_id),
        "status": invoice.status,
        "currency": "usd",
        "line_items": [],  # in-app activity mirrors the app's total, not its lines
        "total": invoice.total,
        "amount_paid": 0,
        "amount_refunded": 0,
        "amount_due": invoice.total,
        "sent_at": iso(invoice.sent_at),
        "paid_at": iso(invoice.paid_at),
        "voided_at": iso(invoice.voided_at),
        "void_reason": invoice.void_reason,
        "created_at": iso(invoice.created_at),
        "updated_at": iso(invoice.updated_at),
    }
    return {**base, **fields}


def test_invoice_created_is_a_draft_for_the_tickets_customer(records, runner):
    record = activity(runner, "invoice.created", {"ticket_id": "1002", "total": 12500, "currency": "eur"})
    invoice = Invoice.get_by_id(int(record["id"]))
    assert (invoice.status, invoice.customer_id, invoice.number) == ("draft", 2, f"INV-{invoice.id}")
    expected = invoice_expected(invoice.id, currency="eur")
    assert record == expected
    assert events() == [("invoice.created", {**expected, "source_kind": "observed"})]


def test_invoice_sent(records, runner):
    record = activity(runner, "invoice.sent", {"id": 3002})
    invoice = Invoice.get_by_id(3002)
    assert invoice.status == "sent" and invoice.sent_at is not None
    assert record == invoice_expected(3002)
    assert events() == [("invoice.sent", {**record, "source_kind": "observed"})]


def test_invoice_paid_records_the_amount_due_then_pays_it(records, runner):
    record = activity(runner, "invoice.paid", {"id": "3001", "method": "card"})
    invoice = Invoice.get_by_id(3001)
    payment = Payment.select().order_by(Payment.id.desc()).first()
    assert (payment.amount, payment.method, payment.invoice_id) == (10900, "card", 3001)
    assert invoice.status == "paid" and invoice.paid_at is not None
    expected = invoice_expected(3001, amount_paid=18900, amount_due=0)
    assert record == expected
    assert events() == [
        (
            "payment.recorded",
            {
                "object": "payment",
                "id": str(payment.id),
                "invoice_id": "3001",
                "customer_id": "1",
                "amount": 10900,
                "amount_refunded": 0,
                "currency": "usd",
                "method": "card",
                "status": "succeeded",
                "created_at": iso(payment.created_at),
                "source_kind": "observed",
            },
        ),
        ("invoice.paid", {**expected, "source_kind": "observed"}),
    ]


def test_invoice_voided(records, runner):
    record = activity(runner, "invoice.voided", {"id": 3002, "reason": "Duplicate"})
    invoice = Invoice.get_by_id(3002)
    assert (invoice.status, invoice.void_reason) == ("void", "Duplicate") and invoice.voided_at is not None
    assert record == invoice_expected(3002)
    assert events() == [("invoice.voided", {**record, "source_kind": "observed"})]


def test_invoice_refunded_takes_the_newest_payments_first(records, runner):
    record = activity(runner, "invoice.refunded", {"id": 3001, "amount": 4000, "reason": "Goodwill"})
    refunds = list(Refund.select().order_by(Refund.id))
    assert [(r.payment_id, r.amount, r.reason) for r in refunds] == [
        (4002, 3000, "Goodwill"),
        (4001, 1000, "Goodwill"),
    ]
    expected = invoice_expected(3001, amount_paid=8000, amount_refunded=4000, amount_due=10900)
    assert record == expected
    assert [t for t, _ in events()] == ["payment.refunded", "payment.refunded", "invoice.refunded"]
    assert events()[0][1] == {
        "object": "refund",
        "id": str(refunds[0].id),
        "payment_id": "4002",
        "invoice_id": "3001",
        "amount": 3000,
        "currency": "usd",
        "reason": "Goodwill",
        "status": "succeeded",
        "created_at": iso(refunds[0].created_at),
        "source_kind": "observed",
    }
    assert events()[2][1] == {**expected, "source_kind": "observed"}


def test_invoice_refunded_without_an_amount_refunds_everything_left(records, runner):
    activity(runner, "invoice.refunded", {"id": 3001, "amount": 1000})
    record = activity(runner, "invoice.refunded", {"id": 3001})
    assert record["amount_refunded"] == 8000
    assert activity(runner, "invoice.refunded", {"id": 3001}).exit_code != 0


# estimates


def test_estimate_sent_drafts_a_new_estimate_for_a_ticket(records, runner):
    record = activity(runner, "estimate.sent", {"ticket_id": "1002", "total": 4500})
    estimate = Estimate.get_by_id(int(record["id"]))
    assert (estimate.status, estimate.ticket_id, estimate.customer_id, estimate.total) == (
        "sent",
        1002,
        2,
        4500,
    )
    expected = {
        "object": "estimate",
        "id": str(estimate.id),
        "number": f"EST-{estimate.id}",
        "ticket_id": "1002",
        "customer_id": "2",
        "status": "sent",
        "currency": "usd",
        "line_items": [],
        "total": 4500,
        "sent_at": iso(estimate.sent_at),
        "approved_at": None,
        "approved_by": None,
        "declined_at": None,
        "declined_by": None,
        "decline_reason": None,
        "created_at": iso(estimate.created_at),
        "updated_at": iso(estimate.updated_at),
    }
    assert record == expected
    assert events() == [("estimate.sent", {**expected, "source_kind": "observed"})]


def test_estimate_sent_sends_an_existing_draft(records, runner):
    record = activity(runner, "estimate.sent", {"id": "5002"})
    assert Estimate.get_by_id(5002).status == "sent" and record["status"] == "sent"
    assert events() == [("estimate.sent", {**record, "source_kind": "observed"})]


EVIDENCE = {
    "signature_image": "data:image/png;base64,iVBORw0KGgoSIGNATURE",
    "ip_address": "198.51.100.23",
    "user_agent": "Mozilla/5.0 (PortalPhone)",
}


def test_estimate_approved_is_the_lean_payload_exactly(records, runner):
    record = activity(runner, "estimate.approved", {"id": "5001", "ticket_id": "1001", **EVIDENCE})
    estimate = Estimate.get_by_id(5001)
    assert (estimate.status, estimate.approved_by) == ("approved", "customer")
    assert record["status"] == "approved"
    assert events() == [
        (
            "estimate.approved",
            {
                "object": "estimate",
                "id": "5001",
                "ticket_id": "1001",
                "status": "approved",
                "approved_at": iso(estimate.approved_at),
                "approved_by": "customer",
                "source_kind": "observed",
            },
        )
    ]
    # the evidence is kept for the shop, never sent
    assert (estimate.decision_signature, estimate.decision_ip_address, estimate.decision_user_agent) == (
        EVIDENCE["signature_image"],
        EVIDENCE["ip_address"],
        EVIDENCE["user_agent"],
    )
    for value in EVIDENCE.values():
        assert value not in json.dumps(events()) and value not in json.dumps(record)


def test_estimate_declined_is_the_lean_payload_exactly(records, runner):
    record = activity(
        runner,
        "estimate.declined",
        {
            "id": "5001",
            "ticket_id": "1001",
            "declined_by": "customer",
            "decline_reason": "Too expensive",
            **EVIDENCE,
        },
    )
    estimate = Estimate.get_by_id(5001)
    assert (estimate.status, estimate.decline_reason) == ("declined", "Too expensive")
    assert events() == [
        (
            "estimate.declined",
            {
                "object": "estimate",
                "id": "5001",
                "ticket_id": "1001",
                "status": "declined",
                "declined_at": iso(estimate.declined_at),
                "declined_by": "customer",
                "decline_reason": "Too expensive",
                "source_kind": "observed",
            },
        )
    ]
    for value in EVIDENCE.values():
        assert value not in json.dumps(events()) and value not in json.dumps(record)


def test_staff_decline_of_a_draft_with_500_characters_of_reason(records, runner):
    activity(
        runner, "estimate.declined", {"id": 5002, "declined_by": "sam@acme.test", "decline_reason": "x" * 500}
    )
    data = events()[0][1]
    assert (data["declined_by"], len(data["decline_reason"]), data["ticket_id"]) == (
        "sam@acme.test",
        500,
        "1002",
    )


def test_a_decided_estimate_cannot_be_decided_again(records, runner):
    activity(runner, "estimate.approved", {"id": 5001})
    before = snapshot()
    for kind in ("estimate.approved", "estimate.declined", "estimate.sent"):
        result = activity(runner, kind, {"id": 5001})
        assert result.exit_code != 0 and "already approved" in result.output
    assert snapshot() == before and len(events()) == 1


# payments


def test_payment_recorded_partly_then_in_full(records, runner):
    record = activity(
        runner, "payment.recorded", {"id": 4010, "invoice_id": "3002", "amount": 2900, "method": "cash"}
    )
    payment = Payment.get_by_id(4010)
    expected = {
        "object": "payment",
        "id": "4010",
        "invoice_id": "3002",
        "customer_id": "2",
        "amount": 2900,
        "amount_refunded": 0,
        "currency": "usd",
        "method": "cash",
        "status": "succeeded",
        "created_at": iso(payment.created_at),
    }
    assert record == expected
    assert events() == [("payment.recorded", {**expected, "source_kind": "observed"})]
    assert Invoice.get_by_id(3002).status == "draft"
    activity(runner, "payment.recorded", {"invoice_id": 3002, "amount": 5000})
    assert [t for t, _ in events()] == ["payment.recorded", "payment.recorded", "invoice.paid"]
    paid = invoice_expected(3002, amount_paid=7900, amount_due=0)
    assert events()[2][1] == {**paid, "source_kind": "observed"}


def test_payment_refunded_is_a_refund_and_refunds_the_invoice(records, runner):
    record = activity(runner, "payment.refunded", {"payment_id": "4001", "reason": "Defective part"})
    refund = Refund.get()
    expected = {
        "object": "refund",
        "id": str(refund.id),
        "payment_id": "4001",
        "invoice_id": "3001",
        "amount": 5000,
        "currency": "usd",
        "reason": "Defective part",
        "status": "succeeded",
        "created_at": iso(refund.created_at),
    }
    assert record == expected
    assert events() == [
        ("payment.refunded", {**expected, "source_kind": "observed"}),
        (
            "invoice.refunded",
            {
                **invoice_expected(3001, amount_paid=8000, amount_refunded=5000, amount_due=10900),
                "source_kind": "observed",
            },
        ),
    ]


def test_partly_refunded_payment_reports_its_status(records, runner):
    activity(runner, "payment.refunded", {"payment_id": 4001, "amount": 1000})
    from shop.domain.records.invoices import PAYMENT, with_refunds

    assert PAYMENT.dump(with_refunds(Payment.get_by_id(4001)))["status"] == "partially_refunded"
    assert activity(runner, "payment.refunded", {"payment_id": 4001, "amount": 4001}).exit_code != 0


# leads


def test_lead_created(records, runner):
    record = activity(runner, "lead.created", {"name": "Di", "email": "di@example.com", "source": "phone"})
    lead = Lead.get_by_id(int(record["id"]))
    expected = {
        "object": "lead",
        "id": str(lead.id),
        "name": "Di",
        "email": "di@example.com",
        "phone": None,
        "source": "phone",
        "status": "new",
        "customer_id": None,
        "converted_ticket_id": None,
        "converted_at": None,
        "created_at": iso(lead.created_at),
        "updated_at": None,
    }
    assert record == expected
    assert events() == [("lead.created", {**expected, "source_kind": "observed"})]


def test_lead_updated_only_on_a_real_change(records, runner):
    record = activity(runner, "lead.updated", {"id": 6001, "status": "contacted"})
    assert Lead.get_by_id(6001).status == "contacted" and record["status"] == "contacted"
    assert events() == [("lead.updated", {**record, "source_kind": "observed"})]
    activity(runner, "lead.updated", {"id": 6001, "status": "contacted", "name": "Cy Park"})
    assert len(events()) == 1


def test_lead_converted_creates_customer_and_ticket(records, runner):
    record = activity(runner, "lead.converted", {"id": "6001", "subject": "Screen quote"})
    lead = Lead.get_by_id(6001)
    customer, ticket = Customer.get_by_id(lead.customer_id), Ticket.get_by_id(lead.converted_ticket_id)
    assert (customer.display_name, customer.email, customer.phone) == (
        "Cy Park",
        "cy@example.com",
        "+15555550102",
    )
    assert (ticket.customer_id, ticket.subject, ticket.tenant_id) == (customer.id, "Screen quote", "acme")
    assert record == {
        "object": "lead",
        "id": "6001",
        "name": "Cy Park",
        "email": "cy@example.com",
        "phone": "+15555550102",
        "source": "web_form",
        "status": "converted",
        "customer_id": str(customer.id),
        "converted_ticket_id": str(ticket.id),
        "converted_at": iso(lead.converted_at),
        "created_at": iso(lead.created_at),
        "updated_at": iso(lead.updated_at),
    }
    assert [t for t, _ in events()] == ["customer.created", "ticket.created", "lead.converted"]
    assert events()[2][1] == {**record, "source_kind": "observed"}
    assert activity(runner, "lead.converted", {"id": 6001}).exit_code != 0


def test_lead_converted_onto_an_existing_customer_and_ticket(records, runner):
    record = activity(runner, "lead.converted", {"id": 6001, "customer_id": 1, "ticket_id": "1001"})
    assert (record["customer_id"], record["converted_ticket_id"]) == ("1", "1001")
    assert [t for t, _ in events()] == ["lead.converted"]


# every observed event is marked so


def test_every_kind_is_registered_and_marks_its_events_observed(records, runner):
    from shop.domain.activity import ACTIVITIES
    from shop.domain.events.catalog import EVENT_TYPES

    # appointment.created (dashboard booking) comes with the appointments issue; the rest are API-driven
    api_driven = {
        "appointment.created",
        "appointment.updated",
        "appointment.canceled",
        "appointment.completed",
        "appointment.no_show",
        "message.sent",
        "webhook.ping",
    }
    assert set(EVENT_TYPES) - api_driven <= set(ACTIVITIES)
    samples = [
        ("customer.created", {}),
        ("ticket.created", {}),
        ("invoice.created", {}),
        ("estimate.sent", {"ticket_id": 1001}),
        ("lead.created", {}),
    ]
    for kind, data in samples:
        activity(runner, kind, data)
    assert {t for t, _ in events()} == {k for k, _ in samples}
    assert all(data["source_kind"] == "observed" for _, data in events())


def test_ticket_updated_moves_the_ticket_to_another_customer(records, runner):
    record = activity(runner, "ticket.updated", {"id": "1001", "customer_id": 2})
    assert Ticket.get_by_id(1001).customer_id == 2 and record["customer_id"] == "2"
    assert [t for t, _ in events()] == ["ticket.updated"]


def test_a_resend_is_a_new_event(records, runner):
    for _ in range(2):
        activity(runner, "invoice.sent", {"id": 3001})
        activity(runner, "estimate.sent", {"id": 5001})
    assert [t for t, _ in events()] == ["invoice.sent", "estimate.sent"] * 2


def test_paid_and_void_invoices_are_not_sent_or_paid_again(records, runner):
    activity(runner, "invoice.paid", {"id": 3001})
    activity(runner, "invoice.voided", {"id": 3002})
    before = snapshot()
    for kind, invoice_id in (
        ("invoice.sent", 3001),
        ("invoice.paid", 3001),
        ("invoice.sent", 3002),
        ("invoice.paid", 3002),
        ("invoice.voided", 3002),
    ):
        result = activity(runner, kind, {"id": invoice_id})
        assert result.exit_code != 0, kind
    assert snapshot() == before

"""Invoices, their payments and refunds: the in-app activity behind invoice.* and payment.*."""

from peewee import fn

from schemas.records import InvoiceSchema, PaymentSchema, RefundSchema
from shop import clock
from shop.domain.activity import refuse_taken_id, unprocessable
from shop.domain.records.changes import emit_record
from shop.domain.records.tickets import activity_ticket
from shop.models import Customer, Invoice, Payment, Refund, Ticket
from shop.platform.errors import not_found

# the data of invoice.*, payment.recorded and payment.refunded
INVOICE, PAYMENT, REFUND = InvoiceSchema(), PaymentSchema(), RefundSchema()


def amount_paid(invoice_id: int) -> int:
    """What the invoice's payments add up to (refunds not subtracted)."""
    total = fn.COALESCE(fn.SUM(Payment.amount), 0)
    return Payment.select(total).where(Payment.invoice == invoice_id).scalar()


def amount_refunded(payment_ids) -> int:
    """What has been refunded of these payments (a list of ids or a subquery)."""
    total = fn.COALESCE(fn.SUM(Refund.amount), 0)
    return Refund.select(total).where(Refund.payment.in_(payment_ids)).scalar()


def with_amounts(invoice: Invoice) -> Invoice:
    """The invoice with the sums its data carries: amount_paid, amount_refunded and amount_due."""
    invoice.amount_paid = amount_paid(invoice.id)
    invoice.amount_refunded = amount_refunded(Payment.select(Payment.id).where(Payment.invoice == invoice.id))
    invoice.amount_due = max(invoice.total - invoice.amount_paid, 0)
    return invoice


def with_refunds(payment: Payment) -> Payment:
    """The payment with what its data adds: amount_refunded and the status that follows from it."""
    refunded = payment.amount_refunded = amount_refunded([payment.id])
    payment.status = (
        "refunded" if refunded >= payment.amount else "partially_refunded" if refunded else "succeeded"
    )
    return payment


def _emit_invoice(tenant_id: str, type_: str, invoice: Invoice) -> dict:
    return emit_record(tenant_id, type_, INVOICE, with_amounts(invoice))


def get_invoice_or_404(tenant_id: str, invoice_id: int, param: str = "id") -> Invoice:
    """The tenant's invoice, or 404; an invoice of a hidden or deleted ticket is not found either."""
    invoice = Invoice.for_tenant(tenant_id).where(Invoice.id == invoice_id).first()
    if invoice is None or (invoice.ticket_id is not None and _hidden(invoice.ticket)):
        raise not_found("invoice", invoice_id, param)
    return invoice


def _hidden(ticket: Ticket) -> bool:
    return ticket.hidden or ticket.deleted


def _touch(record, **fields) -> None:
    for name, value in fields.items():
        setattr(record, name, value)
    record.updated_at = clock.now()
    record.save()


def create_invoice(tenant_id: str, fields: dict) -> dict:
    """In-app activity: a draft invoice is created, for a ticket (its customer by default) or a customer."""
    refuse_taken_id(Invoice, fields, "invoice")
    if fields.get("ticket_id") is not None:
        ticket = activity_ticket(tenant_id, fields["ticket_id"], "ticket_id")
        fields.setdefault("customer_id", ticket.customer_id)
    if (
        fields.get("customer_id") is not None
        and not Customer.for_tenant(tenant_id).where(Customer.id == fields["customer_id"]).exists()
    ):
        raise not_found("customer", fields["customer_id"], "customer_id")
    invoice = Invoice.create(tenant=tenant_id, status="draft", created_at=clock.now(), **fields)
    if invoice.number is None:
        invoice.number = f"INV-{invoice.id}"
        invoice.save()
    return _emit_invoice(tenant_id, "invoice.created", invoice)


def send_invoice(tenant_id: str, fields: dict) -> dict:
    """In-app activity: an invoice is sent (or sent again) to the customer."""
    invoice = get_invoice_or_404(tenant_id, fields["id"])
    if invoice.status in ("paid", "void"):
        raise unprocessable(f"Invoice {invoice.id} is {invoice.status}; only a draft or sent one is sent.")
    _touch(invoice, status="sent", sent_at=clock.now())
    return _emit_invoice(tenant_id, "invoice.sent", invoice)


def mark_invoice_paid(tenant_id: str, fields: dict) -> dict:
    """In-app activity: "mark as paid" records a payment of the amount due, then the invoice is paid."""
    invoice = get_invoice_or_404(tenant_id, fields["id"])
    _check_payable(invoice)
    due = invoice.total - amount_paid(invoice.id)
    if due > 0:
        _new_payment(tenant_id, invoice, {"amount": due, "method": fields["method"]})
    else:
        _settle(tenant_id, invoice)
    return INVOICE.dump(with_amounts(invoice))


def _check_payable(invoice: Invoice) -> None:
    if invoice.status in ("paid", "void"):
        raise unprocessable(f"Invoice {invoice.id} is {invoice.status}; it takes no payment.")


def _settle(tenant_id: str, invoice: Invoice) -> None:
    """A fully paid invoice becomes `paid` and emits invoice.paid."""
    _touch(invoice, status="paid", paid_at=clock.now())
    _emit_invoice(tenant_id, "invoice.paid", invoice)


def _new_payment(tenant_id: str, invoice: Invoice, fields: dict) -> Payment:
    """Record a payment (payment.recorded); the one that covers the total also pays the invoice."""
    due = invoice.total - amount_paid(invoice.id)
    if fields["amount"] > due:
        raise unprocessable(
            f"amount {fields['amount']} exceeds the {due} due on invoice {invoice.id}.", param="amount"
        )
    refuse_taken_id(Payment, fields, "payment")
    payment = Payment.create(tenant=tenant_id, invoice=invoice, created_at=clock.now(), **fields)
    emit_record(tenant_id, "payment.recorded", PAYMENT, with_refunds(payment))
    if fields["amount"] == due:
        _settle(tenant_id, invoice)
    return payment


def record_payment(tenant_id: str, fields: dict) -> dict:
    """In-app activity: a payment is taken against an invoice (at most what is due)."""
    invoice = get_invoice_or_404(tenant_id, fields.pop("invoice_id"), "invoice_id")
    _check_payable(invoice)
    return PAYMENT.dump(with_refunds(_new_payment(tenant_id, invoice, fields)))


def void_invoice(tenant_id: str, fields: dict) -> dict:
    """In-app activity: an unpaid invoice is voided (one with payments must be refunded instead)."""
    invoice = get_invoice_or_404(tenant_id, fields["id"])
    if invoice.status in ("paid", "void") or amount_paid(invoice.id):
        raise unprocessable(f"Invoice {invoice.id} is {invoice.status} or has payments; it cannot be voided.")
    _touch(invoice, status="void", voided_at=clock.now(), void_reason=fields.get("reason"))
    return _emit_invoice(tenant_id, "invoice.voided", invoice)


def _refundable(payment: Payment) -> int:
    return payment.amount - amount_refunded([payment.id])


def _new_refund(tenant_id: str, payment: Payment, amount: int, reason: str | None, refund_id=None) -> Refund:
    """Refund part or all of a payment: payment.refunded, then invoice.refunded for its invoice."""
    fields = {"id": refund_id} if refund_id is not None else {}
    refuse_taken_id(Refund, fields, "refund")
    refund = Refund.create(
        tenant=tenant_id, payment=payment, amount=amount, reason=reason, created_at=clock.now(), **fields
    )
    emit_record(tenant_id, "payment.refunded", REFUND, refund)
    return refund


def refund_payment(tenant_id: str, fields: dict) -> dict:
    """In-app activity: a payment is refunded, fully (no amount) or partly; its invoice is refunded too."""
    payment = Payment.for_tenant(tenant_id).where(Payment.id == fields["payment_id"]).first()
    if payment is None:
        raise not_found("payment", fields["payment_id"], "payment_id")
    invoice = get_invoice_or_404(tenant_id, payment.invoice_id, "payment_id")
    left = _refundable(payment)
    amount = fields.get("amount", left)
    if amount < 1 or amount > left:
        raise unprocessable(f"Payment {payment.id} has {left} left to refund.", param="amount")
    refund = _new_refund(tenant_id, payment, amount, fields.get("reason"), fields.get("id"))
    _touch(invoice)
    _emit_invoice(tenant_id, "invoice.refunded", invoice)
    return REFUND.dump(refund)


def refund_invoice(tenant_id: str, fields: dict) -> dict:
    """In-app activity: an invoice is refunded, fully or partly, from its newest payments first."""
    invoice = get_invoice_or_404(tenant_id, fields["id"])
    payments = list(
        Payment.for_tenant(tenant_id)
        .where(Payment.invoice == invoice.id)
        .order_by(Payment.created_at.desc(), Payment.id.desc())
    )
    left = sum(_refundable(payment) for payment in payments)
    amount = fields.get("amount", left)
    if amount < 1 or amount > left:
        raise unprocessable(f"Invoice {invoice.id} has {left} left to refund.", param="amount")
    for payment in payments:
        part = min(amount, _refundable(payment))
        if part > 0:
            _new_refund(tenant_id, payment, part, fields.get("reason"))
            amount -= part
    _touch(invoice)
    return _emit_invoice(tenant_id, "invoice.refunded", invoice)

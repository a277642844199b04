"""Invoices, their payments and refunds: invoice.*, payment.recorded and payment.refunded.

One function per change, whoever causes it: the API's routes and `shop activity` (its adapters at
the end of this module) both call draft_invoice, deliver_invoice, void_invoice_by_id, take_payment
and refund_payment_by_id with an Actor. A payment locks its invoice and a refund its payment (row
locks on PostgreSQL; SQLite's write transaction already excludes every other writer), so two of them
racing for the last amount due, or for what is left of a payment, record one.
"""

from peewee import JOIN, fn

from schemas.records import InvoiceSchema, PaymentSchema, RefundSchema
from shop import clock
from shop.db import locked, named_sql, on_postgres, run_sql, write_transaction
from shop.domain import actor as actors
from shop.domain.activity import refuse_taken_id, unprocessable
from shop.domain.actor import Actor
from shop.domain.records.changes import emit_as, priced_line_items, refuse_unless_draft
from shop.domain.records.tickets import activity_ticket
from shop.models import Customer, Invoice, Payment, Refund, Ticket
from shop.platform.errors import ApiError, not_found
from shop.platform.pagination import paginate

# the data of invoice.*, payment.recorded and payment.refunded (each the GET answer of its record)
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


def payments_of_invoice(tenant_id: str, invoice_id: int) -> list[Payment]:
    """The invoice's payments, oldest first, each with what is refunded of it (the console's invoice)."""
    query = Payment.for_tenant(tenant_id).where(Payment.invoice == invoice_id).order_by(Payment.id)
    return [with_refunds(payment) for payment in query]


def invoice_payment(tenant_id: str, invoice_id: int, payment_id: int) -> Payment | None:
    """One of the invoice's payments, or None (another invoice's or shop's is none of its)."""
    return (
        Payment.for_tenant(tenant_id)
        .where((Payment.id == payment_id) & (Payment.invoice == invoice_id))
        .first()
    )


def with_refunds(payment: Payment) -> Payment:
    """The payment with what its data adds: amount_refunded and the status that follows from it."""
    refunded = payment.amount_refunded = amount_refunded([payment.id])
    payment.status = (
        "refunded" if refunded >= payment.amount else "partially_refunded" if refunded else "succeeded"
    )
    return payment


def _emit_invoice(actor: Actor, tenant_id: str, type_: str, invoice: Invoice) -> dict:
    return emit_as(actor, tenant_id, type_, INVOICE, with_amounts(invoice))


def _visible(query, ticket_field):
    """Rows whose ticket (if any) is neither hidden nor deleted."""
    return query.join(Ticket, JOIN.LEFT_OUTER, on=ticket_field == Ticket.id).where(
        Ticket.id.is_null() | (~Ticket.hidden & ~Ticket.deleted)
    )


def visible_invoices(tenant_id: str):
    """The tenant's invoices but those of a hidden or deleted ticket."""
    return _visible(Invoice.for_tenant(tenant_id), Invoice.ticket)


def visible_payments(tenant_id: str):
    """The tenant's payments but those of an invoice of a hidden or deleted ticket."""
    query = Payment.for_tenant(tenant_id).join(Invoice, on=Payment.invoice == Invoice.id)
    return _visible(query, Invoice.ticket)


def visible_refunds(tenant_id: str):
    """The tenant's refunds but those of an invoice of a hidden or deleted ticket."""
    query = (
        Refund.for_tenant(tenant_id)
        .join(Payment, on=Refund.payment == Payment.id)
        .join(Invoice, on=Payment.invoice == Invoice.id)
    )
    return _visible(query, Invoice.ticket)


def _hidden(ticket: Ticket | None) -> bool:
    return ticket is not None and (ticket.hidden or ticket.deleted)


def get_invoice_or_404(tenant_id: str, invoice_id: int, param: str = "id", lock: bool = False) -> Invoice:
    """The tenant's invoice, or 404; an invoice of a hidden or deleted ticket is not found either.
    `lock` holds its row until the transaction ends (the invoice's row alone: a subquery in WHERE
    locks nothing, so its ticket stays free)."""
    hidden = Ticket.select(Ticket.id).where(Ticket.hidden | Ticket.deleted)
    query = Invoice.for_tenant(tenant_id).where(
        (Invoice.id == invoice_id) & (Invoice.ticket.is_null() | Invoice.ticket.not_in(hidden))
    )
    invoice = (locked(query) if lock else query).first()
    if invoice is None:
        raise not_found("invoice", invoice_id, param)
    return invoice


def get_payment_or_404(tenant_id: str, payment_id: int, param: str = "id", lock: bool = False) -> Payment:
    """The tenant's payment on a visible invoice, or 404; `lock` holds its row to the transaction's end."""
    query = Payment.for_tenant(tenant_id).where(Payment.id == payment_id)
    payment = (locked(query) if lock else query).first()
    if payment is None or _hidden(payment.invoice.ticket):
        raise not_found("payment", payment_id, param)
    return payment


def get_refund_or_404(tenant_id: str, refund_id: int) -> Refund:
    """The tenant's refund on a visible invoice, or 404."""
    refund = visible_refunds(tenant_id).where(Refund.id == refund_id).first()
    if refund is None:
        raise not_found("refund", refund_id)
    return refund


def _touch(record, **fields) -> None:
    for name, value in fields.items():
        setattr(record, name, value)
    record.updated_at = clock.now()
    record.save()


# reading


def list_invoices(tenant_id: str, args: dict) -> dict:
    """One page of the tenant's visible invoices, newest first, each with its sums."""
    query = visible_invoices(tenant_id)
    for name in ("ticket_id", "customer_id", "status"):
        if name in args:
            query = query.where(getattr(Invoice, name) == args[name])
    page = paginate(query, [(Invoice.id, True)], args["limit"], args["cursor"])
    page.items = [with_amounts(invoice) for invoice in page.items]
    return page.envelope()


def retrieve_invoice(tenant_id: str, invoice_id: int) -> Invoice:
    """GET /invoices/<id>: the invoice with its sums."""
    return with_amounts(get_invoice_or_404(tenant_id, invoice_id))


def list_payments(tenant_id: str, args: dict) -> dict:
    """One page of the tenant's visible payments, newest first (filter invoice_id)."""
    query = visible_payments(tenant_id)
    if "invoice_id" in args:
        query = query.where(Payment.invoice == args["invoice_id"])
    page = paginate(query, [(Payment.id, True)], args["limit"], args["cursor"])
    page.items = [with_refunds(payment) for payment in page.items]
    return page.envelope()


def retrieve_payment(tenant_id: str, payment_id: int) -> Payment:
    """GET /payments/<id>: the payment with what has been refunded of it."""
    return with_refunds(get_payment_or_404(tenant_id, payment_id))


def list_refunds(tenant_id: str, args: dict) -> dict:
    """One page of the tenant's visible refunds, newest first (filter payment_id)."""
    query = visible_refunds(tenant_id)
    if "payment_id" in args:
        query = query.where(Refund.payment == args["payment_id"])
    return paginate(query, [(Refund.id, True)], args["limit"], args["cursor"]).envelope()


# invoices


def _invoice_parties(tenant_id: str, fields: dict) -> None:
    """Check the ticket (visible) and the customer (the ticket's by default, and no other's)."""
    if fields.get("ticket_id") is not None:
        ticket = activity_ticket(tenant_id, fields["ticket_id"], "ticket_id")
        if fields.get("customer_id") is not None and fields["customer_id"] != ticket.customer_id:
            raise ApiError(
                400, "invalid_field", "customer_id: not the customer of the ticket.", param="customer_id"
            )
        fields.setdefault("customer_id", ticket.customer_id)
    if (
        fields.get("customer_id") is not None
        and not Customer.for_tenant(tenant_id).where(Customer.id == fields["customer_id"]).exists()
    ):
        raise not_found("customer", fields["customer_id"], "customer_id")


def draft_invoice(tenant_id: str, actor: Actor, fields: dict) -> Invoice:
    """A draft invoice for a ticket (its customer by default) and/or a customer: invoice.created.
    Line items price it; in-app activity, which mirrors the app's invoice, gives its total alone."""
    with write_transaction():
        refuse_taken_id(Invoice, fields, "invoice")
        _invoice_parties(tenant_id, fields)
        if "line_items" in fields:
            fields["line_items"], fields["total"] = priced_line_items(fields["line_items"])
        invoice = Invoice.create(tenant=tenant_id, status="draft", created_at=clock.now(), **fields)
        if invoice.number is None:
            invoice.number = f"INV-{invoice.id}"
            invoice.save()
        _emit_invoice(actor, tenant_id, "invoice.created", invoice)
        return invoice


def revise_invoice(tenant_id: str, actor: Actor, invoice_id: int, changes: dict) -> Invoice:
    """Change a draft's line items or currency (any other status, or a draft with payments, is 422);
    the catalog has no invoice.updated, so nothing is emitted."""
    with write_transaction():
        invoice = get_invoice_or_404(tenant_id, invoice_id, lock=True)
        refuse_unless_draft(invoice, "invoice")
        if amount_paid(invoice.id):
            raise unprocessable(f"Invoice {invoice.id} has payments; it is no longer edited.")
        if "line_items" in changes:
            changes["line_items"], changes["total"] = priced_line_items(changes["line_items"])
        _touch(invoice, **changes)
        return with_amounts(invoice)


def deliver_invoice(tenant_id: str, actor: Actor, invoice_id: int) -> Invoice:
    """An invoice is sent (or sent again) to the customer: invoice.sent; a paid or void one is 422."""
    with write_transaction():
        invoice = get_invoice_or_404(tenant_id, invoice_id, lock=True)
        if invoice.status in ("paid", "void"):
            raise unprocessable(
                f"Invoice {invoice.id} is {invoice.status}; only a draft or sent one is sent."
            )
        _touch(invoice, status="sent", sent_at=clock.now())
        _emit_invoice(actor, tenant_id, "invoice.sent", invoice)
        return invoice


def void_invoice_by_id(tenant_id: str, actor: Actor, invoice_id: int, reason: str | None) -> Invoice:
    """An unpaid invoice is voided: invoice.voided (one with payments must be refunded instead)."""
    with write_transaction():
        invoice = get_invoice_or_404(tenant_id, invoice_id, lock=True)
        if invoice.status in ("paid", "void") or amount_paid(invoice.id):
            raise unprocessable(
                f"Invoice {invoice.id} is {invoice.status} or has payments; it cannot be voided."
            )
        _touch(invoice, status="void", voided_at=clock.now(), void_reason=reason)
        _emit_invoice(actor, tenant_id, "invoice.voided", invoice)
        return invoice


# payments and refunds

# a payment's hot path in constant SQL (prepared once, not rebuilt by the query builder per request):
# the invoice, locked, if it is the tenant's and its ticket visible; then, once the lock is held
# (a separate statement, so it reads what a payment that held the lock before committed), what is paid
PAYABLE_INVOICE = named_sql(
    f"SELECT {Invoice.columns('i')} FROM invoice AS i WHERE i.tenant_id = :tenant AND i.id = :invoice "
    "AND (i.ticket_id IS NULL OR i.ticket_id NOT IN "
    "(SELECT t.id FROM ticket AS t WHERE t.hidden OR t.deleted))"
)
PAID_SO_FAR = named_sql("SELECT COALESCE(SUM(amount), 0) FROM payment WHERE invoice_id = :invoice")
NEW_PAYMENT = named_sql(
    "INSERT INTO payment (tenant_id, invoice_id, amount, method, created_at) "
    "VALUES (:tenant, :invoice, :amount, :method, :created_at) RETURNING id"
)


def _payable_invoice(tenant_id: str, invoice_id: int, param: str) -> Invoice:
    """The invoice a payment is for, its row locked until the transaction ends; or 404."""
    text = PAYABLE_INVOICE + (" FOR UPDATE" if on_postgres() else "")
    rows = run_sql(text, {"tenant": tenant_id, "invoice": invoice_id})
    if not rows:
        raise not_found("invoice", invoice_id, param)
    return Invoice.from_row(rows[0])


def _insert_payment(tenant_id: str, invoice: Invoice, fields: dict) -> Payment:
    """The new payment row (an id given, by in-app activity, goes through the model instead)."""
    if "id" in fields:
        refuse_taken_id(Payment, fields, "payment")
        return Payment.create(tenant=tenant_id, invoice=invoice, created_at=clock.now(), **fields)
    values = {
        "tenant": tenant_id,
        "invoice": invoice.id,
        "amount": fields["amount"],
        "method": fields["method"],
    }
    created_at = clock.now()
    [(payment_id,)] = run_sql(NEW_PAYMENT, {**values, "created_at": Payment.created_at.db_value(created_at)})
    return Payment(id=payment_id, tenant=tenant_id, invoice=invoice, created_at=created_at, **fields)


def _settle(actor: Actor, tenant_id: str, invoice: Invoice) -> None:
    """A fully paid invoice becomes `paid` and emits invoice.paid."""
    _touch(invoice, status="paid", paid_at=clock.now())
    _emit_invoice(actor, tenant_id, "invoice.paid", invoice)


def take_payment(
    tenant_id: str, actor: Actor, invoice_id: int, fields: dict, param: str = "invoice_id"
) -> Payment:
    """Record a payment against an invoice, at most what is due: payment.recorded, and invoice.paid
    in the same transaction for the one that covers the total; the payment with its sums. The
    invoice's row is locked first, so a payment racing this one reads the amount due after it commits."""
    with write_transaction():
        invoice = _payable_invoice(tenant_id, invoice_id, param)
        if invoice.status in ("paid", "void"):
            raise unprocessable(
                f"Invoice {invoice.id} is {invoice.status}; it takes no payment.", param=param
            )
        due = invoice.total - run_sql(PAID_SO_FAR, {"invoice": invoice.id})[0][0]
        if fields["amount"] > due:
            raise unprocessable(
                f"amount {fields['amount']} exceeds the {due} due on invoice {invoice.id}.", param="amount"
            )
        payment = _insert_payment(tenant_id, invoice, fields)
        payment.amount_refunded, payment.status = 0, "succeeded"  # a new payment has no refunds yet
        emit_as(actor, tenant_id, "payment.recorded", PAYMENT, payment)
        if fields["amount"] == due:
            _settle(actor, tenant_id, invoice)
        return payment


def _refundable(payment: Payment) -> int:
    return payment.amount - amount_refunded([payment.id])


def _new_refund(
    actor: Actor, tenant_id: str, payment: Payment, amount: int, reason, refund_id=None
) -> Refund:
    """Refund part of a payment: payment.refunded with the refund."""
    fields = {"id": refund_id} if refund_id is not None else {}
    refuse_taken_id(Refund, fields, "refund")
    refund = Refund.create(
        tenant=tenant_id, payment=payment, amount=amount, reason=reason, created_at=clock.now(), **fields
    )
    emit_as(actor, tenant_id, "payment.refunded", REFUND, refund)
    return refund


def refund_payment_by_id(
    tenant_id: str, actor: Actor, payment_id: int, amount: int | None, reason: str | None, refund_id=None
) -> Refund:
    """Refund a payment, all that is left of it (no amount) or part: payment.refunded, then
    invoice.refunded; the invoice keeps its status. The payment's row is locked first, so a refund
    racing this one reads what is left after this one commits."""
    with write_transaction():
        payment = get_payment_or_404(tenant_id, payment_id, "payment_id", lock=True)
        left = _refundable(payment)
        amount = left if amount is None else amount
        if amount < 1 or amount > left:
            raise unprocessable(f"Payment {payment.id} has {left} left to refund.", param="amount")
        refund = _new_refund(actor, tenant_id, payment, amount, reason, refund_id)
        invoice = payment.invoice
        _touch(invoice)
        _emit_invoice(actor, tenant_id, "invoice.refunded", invoice)
        return refund


# in-app activity: `shop activity invoice.* / payment.*` parses --data and calls the functions above

IN_APP = actors.in_app("system")


def create_invoice(tenant_id: str, fields: dict) -> dict:
    """In-app activity: a draft invoice is created, for a ticket (its customer by default) or a customer."""
    return INVOICE.dump(with_amounts(draft_invoice(tenant_id, IN_APP, fields)))


def send_invoice(tenant_id: str, fields: dict) -> dict:
    """In-app activity: an invoice is sent (or sent again) to the customer."""
    return INVOICE.dump(deliver_invoice(tenant_id, IN_APP, fields["id"]))


def mark_invoice_paid(tenant_id: str, fields: dict) -> dict:
    """In-app activity: "mark as paid" records a payment of the amount due, then the invoice is paid."""
    invoice = get_invoice_or_404(tenant_id, fields["id"], lock=True)
    if invoice.status in ("paid", "void"):
        raise unprocessable(f"Invoice {invoice.id} is {invoice.status}; it takes no payment.")
    due = invoice.total - amount_paid(invoice.id)
    if due > 0:
        take_payment(tenant_id, IN_APP, invoice.id, {"amount": due, "method": fields["method"]}, "id")
        invoice = Invoice.get_by_id(invoice.id)
    else:
        _settle(IN_APP, tenant_id, invoice)
    return INVOICE.dump(with_amounts(invoice))


def record_payment(tenant_id: str, fields: dict) -> dict:
    """In-app activity: a payment is taken against an invoice (at most what is due)."""
    invoice_id = fields.pop("invoice_id")
    return PAYMENT.dump(take_payment(tenant_id, IN_APP, invoice_id, fields))


def void_invoice(tenant_id: str, fields: dict) -> dict:
    """In-app activity: an unpaid invoice is voided (one with payments must be refunded instead)."""
    return INVOICE.dump(void_invoice_by_id(tenant_id, IN_APP, fields["id"], fields.get("reason")))


def refund_payment(tenant_id: str, fields: dict) -> dict:
    """In-app activity: a payment is refunded, fully (no amount) or partly; its invoice is refunded too."""
    refund = refund_payment_by_id(
        tenant_id, IN_APP, fields["payment_id"], fields.get("amount"), fields.get("reason"), fields.get("id")
    )
    return REFUND.dump(refund)


def refund_invoice(tenant_id: str, fields: dict) -> dict:
    """In-app activity: an invoice is refunded, fully or partly, from its newest payments first."""
    invoice = get_invoice_or_404(tenant_id, fields["id"], lock=True)
    payments = list(
        locked(
            Payment.for_tenant(tenant_id)
            .where(Payment.invoice == invoice.id)
            .order_by(Payment.created_at.desc(), Payment.id.desc())
        )
    )
    left = sum(_refundable(payment) for payment in payments)
    amount = fields.get("amount", left)
    if amount < 1 or amount > left:
        raise unprocessable(f"Invoice {invoice.id} has {left} left to refund.", param="amount")
    for payment in payments:
        part = min(amount, _refundable(payment))
        if part > 0:
            _new_refund(IN_APP, tenant_id, payment, part, fields.get("reason"))
            amount -= part
    _touch(invoice)
    return _emit_invoice(IN_APP, tenant_id, "invoice.refunded", invoice)

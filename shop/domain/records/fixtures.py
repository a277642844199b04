"""Fixture sections of the shop's records: invoices, estimates, payments, refunds and leads."""

from shop import clock
from shop.domain import fixture_rows as fixtures
from shop.domain.records.invoices import amount_paid, amount_refunded
from shop.models import Customer, Estimate, Invoice, Lead, Payment, Refund, Ticket

# a status implies its timestamp; one left out is the load time, as created_at is
STATUS_STAMPS = {
    "sent": "sent_at",
    "paid": "paid_at",
    "void": "voided_at",
    "approved": "approved_at",
    "declined": "declined_at",
    "converted": "converted_at",
}


def _times(item: dict) -> None:
    """A record loaded in a status stamps that status's time (its creation time when none is given)."""
    stamp = STATUS_STAMPS.get(item.get("status"))
    if stamp is not None and item.get(stamp) is None:
        item[stamp] = item.get("created_at") or clock.now()


def _ref(path: str, tenant_id: str, item: dict, key: str, model, extra=None):
    """Resolve `key` (customer_id, ticket_id, ...) to the tenant's record, or name the entry."""
    value = item.get(key)
    if value is None:
        return None
    query = model.for_tenant(tenant_id).where(model.id == value)
    found = (query.where(extra) if extra is not None else query).first()
    if found is None:
        raise fixtures.FixtureError(f"{path}.{key}", f"no {key[:-3]} {value} in this tenant.")
    return found


def _load_numbered(path: str, tenant_id: str, item: dict, model, prefix: str) -> None:
    """An invoice or estimate of a customer and/or ticket (the ticket's customer by default), numbered
    `<prefix>-<id>` when the fixture gives no number."""
    ticket = _ref(path, tenant_id, item, "ticket_id", Ticket)
    _ref(path, tenant_id, item, "customer_id", Customer)
    if ticket is not None:
        item.setdefault("customer_id", ticket.customer_id)
    _times(item)
    record = fixtures.insert(path, model.create, tenant=tenant_id, **item)
    if record.number is None:
        record.number = f"{prefix}-{record.id}"
        record.save()


def load_invoice(path: str, tenant_id: str, item: dict, summary: dict) -> None:
    """An invoice of a customer and/or ticket."""
    _load_numbered(path, tenant_id, item, Invoice, "INV")


def load_estimate(path: str, tenant_id: str, item: dict, summary: dict) -> None:
    """An estimate of a ticket (the fixture format requires its ticket_id)."""
    _load_numbered(path, tenant_id, item, Estimate, "EST")


def load_payment(path: str, tenant_id: str, item: dict, summary: dict) -> None:
    """A payment against an invoice, at most what is still due on it."""
    invoice = _ref(path, tenant_id, item, "invoice_id", Invoice)
    due = invoice.total - amount_paid(invoice.id)
    if item["amount"] > due:
        raise fixtures.FixtureError(f"{path}.amount", f"exceeds the {due} due on the invoice.")
    _times(item)
    fixtures.insert(path, Payment.create, tenant=tenant_id, **item)


def load_refund(path: str, tenant_id: str, item: dict, summary: dict) -> None:
    """A refund of a payment, at most what is left of it."""
    payment = _ref(path, tenant_id, item, "payment_id", Payment)
    left = payment.amount - amount_refunded([payment.id])
    if item["amount"] > left:
        raise fixtures.FixtureError(f"{path}.amount", f"exceeds the {left} left to refund.")
    _times(item)
    fixtures.insert(path, Refund.create, tenant=tenant_id, **item)


def load_lead(path: str, tenant_id: str, item: dict, summary: dict) -> None:
    """A lead, converted ones with their customer and ticket."""
    _ref(path, tenant_id, item, "customer_id", Customer)
    _ref(path, tenant_id, item, "converted_ticket_id", Ticket)
    if item.get("status") == "converted" and item.get("converted_ticket_id") is None:
        raise fixtures.FixtureError(f"{path}.converted_ticket_id", "a converted lead needs its ticket.")
    _times(item)
    fixtures.insert(path, Lead.create, tenant=tenant_id, **item)

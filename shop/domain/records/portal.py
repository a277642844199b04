"""The customer's portal links: a secret token per sent estimate or invoice, and the email that
carries it (issue 27).

Sending a document (the API's /send or the console) makes a new token, keeps only its SHA-256 on the
document (the previous link stops working) and emails the link through the messaging pipeline. The
email is best effort: a customer without an email address, a suppressed address or the send rate
leave the document sent and say why no email went out. Deciding an estimate in the portal is the
estimates' own decide_estimate with `actor.customer("portal")`; the evidence stays on the estimate.
"""

import hashlib
import secrets
from typing import NamedTuple

from shop.db import write_transaction
from shop.domain.activity import unprocessable
from shop.domain.actor import Actor
from shop.domain.messaging.sending import send_message
from shop.domain.records import estimates, invoices
from shop.models import Customer, Estimate, Invoice, Tenant
from shop.platform.errors import ApiError

TOKEN_BYTES = 32  # 43 URL-safe characters
TOKEN_MAX = 100
PATHS = {"estimate": "/portal/estimates/", "invoice": "/portal/invoices/"}


class Delivery(NamedTuple):
    """A sent document, its portal link, and why no email went out (None when one did)."""

    document: Estimate | Invoice
    link: str
    no_email: str | None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _new_token(document) -> str:
    token = secrets.token_urlsafe(TOKEN_BYTES)
    document.portal_token_hash = token_hash(token)
    document.save()
    return token


def by_token(model, token: str):
    """The estimate or invoice whose link this is, on a visible ticket of a live tenant; else None."""
    if not 20 <= len(token) <= TOKEN_MAX or not token.replace("-", "").replace("_", "").isalnum():
        return None
    document = model.select().where(model.portal_token_hash == token_hash(token)).first()
    if document is None or document.tenant.suspended:
        return None
    ticket = document.ticket
    if ticket is not None and (ticket.hidden or ticket.deleted):
        return None
    return document


def send_estimate(tenant: Tenant, actor: Actor, estimate_id: int, root: str, sender: str | None) -> Delivery:
    """Send an estimate (estimate.sent, as the API's /send), with a new portal link, and email it."""
    with write_transaction():
        estimate = estimates.retrieve_estimate(tenant.id, estimate_id, lock=True)
        estimates.deliver_estimate(tenant.id, actor, estimate)
        link = root + PATHS["estimate"] + _new_token(estimate)
    return Delivery(estimate, link, _email(tenant, "estimate", estimate, link, sender))


def send_invoice(tenant: Tenant, actor: Actor, invoice_id: int, root: str, sender: str | None) -> Delivery:
    """Send an invoice (invoice.sent, as the API's /send), with a new portal link, and email it."""
    with write_transaction():
        invoice = invoices.deliver_invoice(tenant.id, actor, invoice_id)
        link = root + PATHS["invoice"] + _new_token(invoice)
    return Delivery(invoice, link, _email(tenant, "invoice", invoice, link, sender))


def _email(tenant: Tenant, kind: str, document, link: str, sender: str | None) -> str | None:
    """Email the link to the document's customer; why not, when it could not be sent."""
    customer = Customer.get_or_none(Customer.id == document.customer_id) if document.customer_id else None
    if customer is None or not customer.email:
        return "The customer has no email address; no email was sent. Share the link another way."
    if document.ticket_id is None:
        return "The invoice has no ticket to send its email from; no email was sent."
    greeting = f"Hello {customer.display_name}," if customer.display_name else "Hello,"
    if kind == "estimate":
        subject = f"Estimate {document.number} from {tenant.name}"
        ask = "Please review it, and approve or decline it, here:"
    else:
        subject = f"Invoice {document.number} from {tenant.name}"
        ask = "You can see it, and what is due, here:"
    body = (
        f"{greeting}\n\n{tenant.name} has sent you {kind} {document.number}. {ask}\n\n"
        f"{link}\n\n{tenant.name}\n"
    )
    request = {"channel": "email", "ticket_id": str(document.ticket_id), "subject": subject, "body": body}
    try:
        send_message(tenant, request, sender)
    except ApiError as error:
        return f"No email was sent: {error.message}"
    return None


def decide(
    estimate: Estimate, actor: Actor, status: str, evidence: dict, reason: str | None = None
) -> Estimate:
    """The customer approves or declines a sent estimate from its link: the estimates' own rule and
    lean event; the typed name, address and browser are kept on the estimate only."""
    with write_transaction():
        locked = estimates.retrieve_estimate(estimate.tenant_id, estimate.id, lock=True)
        if locked.status != "sent":
            raise unprocessable(f"This estimate is already {locked.status}.")
        decided = estimates.decide_estimate(locked.tenant_id, actor, locked, status, reason, evidence)
        decided.decision_name = evidence.get("name")
        decided.save()
        return decided

"""Money in the front office: estimates and invoices with line items, sent to the customer with a
portal link, payments taken (cash, card terminal, check, transfer: recorded, no card data), refunds
and voids. Every change is the records' own domain function with the teammate as actor; amounts due
are always the domain's (invoices.with_amounts)."""

import re

from flask import current_app, g, redirect, request, url_for

from schemas.billing import MAX_LINE_ITEMS, MAX_QUANTITY, MAX_UNIT_AMOUNT, REASON_MAX
from shop.console import forms, nav
from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import render
from shop.domain.messaging.sending import sender_for
from shop.domain.records import estimates, invoices, portal
from shop.models import Estimate, Invoice
from shop.platform.errors import ApiError
from shop.platform.ids import parse_id
from shop.platform.public_url import public_root
from shop.portal.humane import money

nav.add(nav.NavItem("console.estimates", "Estimates", "estimates.read"))
nav.add(nav.NavItem("console.invoices", "Invoices", "invoices.read"))

LINE_ROWS = 5  # blank rows offered on a new document (more lines: the API, up to MAX_LINE_ITEMS)
LISTED = 100
PRICE = re.compile(r"^\d{1,9}(\.\d{1,2})?\Z")
METHODS = {"cash": "Cash", "card": "Card terminal", "check": "Check", "bank_transfer": "Bank transfer"}
CURRENCIES = ("usd", "eur", "gbp", "cad", "aud")


def cents(text: str) -> int | None:
    """`12.5`, `12.50` or `12` (major units, as people type them) in minor units; None if not one."""
    text = text.replace(",", "").strip().lstrip("$")
    if not PRICE.match(text):
        return None
    whole, _, part = text.partition(".")
    return int(whole) * 100 + int((part + "00")[:2])


def _field(name: str, max_length: int, errors: dict, required: bool = False) -> str | None:
    """One bounded form value, or its error beside the field (never a half-read form)."""
    try:
        value = forms.text(name, max_length, required=required)
    except ApiError as error:
        errors[name] = error.message.split(": ", 1)[-1].capitalize()
        return None
    if value and any((ord(c) < 32 and c not in "\t") or ord(c) == 127 for c in value):
        errors[name] = "Remove the control characters."
        return None
    return value


def _line_items(errors: dict, typed: dict) -> list[dict]:
    """The filled-in rows of the line-items table: description, quantity, unit price."""
    items = []
    descriptions, quantities, prices = (request.form.getlist(n) for n in ("description", "quantity", "price"))
    rows = max(len(descriptions), len(quantities), len(prices))
    if rows > MAX_LINE_ITEMS:
        errors["lines"] = f"At most {MAX_LINE_ITEMS} lines."
        return []
    typed["lines"] = []
    for row in range(rows):
        description = (descriptions[row] if row < len(descriptions) else "").strip()
        quantity = (quantities[row] if row < len(quantities) else "").strip()
        price = (prices[row] if row < len(prices) else "").strip()
        typed["lines"].append({"description": description, "quantity": quantity, "price": price})
        if not (description or price or quantity not in ("", "1")):
            continue
        where = f"Line {row + 1}: "
        if not description:
            errors.setdefault("lines", where + "describe the item.")
        elif len(description) > 500 or any(ord(c) < 32 or ord(c) == 127 for c in description):
            errors.setdefault("lines", where + "the description is at most 500 plain characters.")
        quantity_number = (
            int(quantity) if quantity.isascii() and quantity.isdigit() and len(quantity) < 7 else 0
        )
        if not 1 <= quantity_number <= MAX_QUANTITY:
            errors.setdefault("lines", where + f"the quantity is a whole number from 1 to {MAX_QUANTITY:,}.")
        unit = cents(price) if price.isascii() else None
        if unit is None or unit > MAX_UNIT_AMOUNT:
            errors.setdefault("lines", where + "the unit price is an amount such as 45.00.")
        items.append({"description": description, "quantity": quantity_number, "unit_amount": unit or 0})
    if not items and "lines" not in errors:
        errors["lines"] = "Add at least one line: a description and a unit price."
    return items


def _ticket(errors: dict) -> int | None:
    if "".join(request.form.getlist("ticket_id")).strip() == "":
        errors["ticket_id"] = "Which ticket is it for? Type its number."
        return None
    text = _field("ticket_id", 20, errors, required=True)
    if text is None:
        return None
    try:
        return parse_id(text.lstrip("#"), param="ticket_id")
    except ApiError:
        errors["ticket_id"] = "A ticket number, such as 1042."
        return None


def _currency(errors: dict) -> str:
    value = _field("currency", 3, errors) or "usd"
    if value not in CURRENCIES:
        errors["currency"] = "Choose one of the currencies listed."
    return value


def _refused(error: ApiError, errors: dict, default: str) -> int:
    """A domain refusal beside the field it names (the ticket, an amount), else over the form; the
    page's status is the refusal's (404 unknown ticket, 422 not possible now)."""
    if error.status >= 500:
        raise error
    field = {"ticket_id": "ticket_id", "customer_id": "ticket_id", "amount": "amount"}.get(
        error.param or "", default
    )
    errors[field] = error.message
    return error.status


def _tenant_id() -> str:
    return g.tenant.id


# estimates


@bp.route("/estimates", methods=["GET"], endpoint="estimates")
@page("estimates.read")
def estimate_list():
    """The newest estimates with their status and total."""
    rows = estimates.visible_estimates(_tenant_id()).order_by(Estimate.id.desc()).limit(LISTED)
    return render("console/estimates.html", section="console.estimates", rows=list(rows), money=money)


@bp.route("/estimates/new", methods=["GET"], endpoint="estimate_new")
@page("estimates.write")
def estimate_new():
    """The form for a new estimate (for the ticket in the query, if given)."""
    ticket = (request.args.get("ticket_id") or "")[:20]
    return _document_form("estimate", {"ticket_id": ticket}, {}, 200)


@bp.route("/estimates", methods=["POST"], endpoint="estimate_create")
@page("estimates.write")
def estimate_create():
    """Draft an estimate for a ticket from its line items (the domain prices it)."""
    return _create_document("estimate", estimates.draft_estimate)


def _create_document(kind: str, draft):
    """Draft an estimate or invoice for a ticket from the form's line items (the domain prices it)."""
    errors, typed = {}, {"ticket_id": request.form.get("ticket_id", "")[:40]}
    ticket_id, currency, items = _ticket(errors), _currency(errors), _line_items(errors, typed)
    typed["currency"] = currency
    status = 400
    if not errors:
        try:
            made = draft(
                _tenant_id(), g.actor, {"ticket_id": ticket_id, "line_items": items, "currency": currency}
            )
        except ApiError as error:
            status = _refused(error, errors, "lines")
        else:
            return redirect(url_for(f"console.{kind}", **{f"{kind}_id": made.id}), 303)
    return _document_form(kind, typed, errors, status)


@bp.route("/estimates/<estimate_id>", methods=["GET"], endpoint="estimate")
@page("estimates.read")
def estimate_view(estimate_id: str):
    """One estimate: its lines, status, the decision, and Send."""
    found = estimates.retrieve_estimate(_tenant_id(), parse_id(estimate_id))
    return _estimate_page(found, None, None, 200)


@bp.route("/estimates/<estimate_id>/send", methods=["POST"], endpoint="estimate_send")
@page("estimates.write")
def estimate_send(estimate_id: str):
    """Send (or send again) the estimate with a new portal link, emailed when the customer has an address."""
    number = parse_id(estimate_id)
    root, sender = public_root(), sender_for("email", current_app.config)
    sent = portal.send_estimate(g.tenant, g.actor, number, root, sender)
    return _estimate_page(sent.document, sent.link, sent.no_email, 200)


def _estimate_page(found: Estimate, link: str | None, no_email: str | None, status: int):
    notice = None
    if link:
        notice = "Sent. " + (no_email or "The customer was emailed the link below.")
    return render(
        "console/estimate.html",
        status,
        section="console.estimates",
        estimate=found,
        link=link,
        notice=notice,
        money=money,
    )


# invoices


@bp.route("/invoices", methods=["GET"], endpoint="invoices")
@page("invoices.read")
def invoice_list():
    """The newest invoices with their total and what is due."""
    rows = invoices.visible_invoices(_tenant_id()).order_by(Invoice.id.desc()).limit(LISTED)
    rows = [invoices.with_amounts(row) for row in rows]
    return render("console/invoices.html", section="console.invoices", rows=rows, money=money)


@bp.route("/invoices/new", methods=["GET"], endpoint="invoice_new")
@page("invoices.write")
def invoice_new():
    """The form for a new invoice (for the ticket in the query, if given)."""
    ticket = (request.args.get("ticket_id") or "")[:20]
    return _document_form("invoice", {"ticket_id": ticket}, {}, 200)


@bp.route("/invoices", methods=["POST"], endpoint="invoice_create")
@page("invoices.write")
def invoice_create():
    """Draft an invoice for a ticket (its customer) from its line items: invoice.created."""
    return _create_document("invoice", invoices.draft_invoice)


@bp.route("/invoices/<invoice_id>", methods=["GET"], endpoint="invoice")
@page("invoices.read")
def invoice_view(invoice_id: str):
    """One invoice: lines, total, paid, due; its payments with their refunds; send, pay, refund, void."""
    return _invoice_page(parse_id(invoice_id), {}, {}, 200)


@bp.route("/invoices/<invoice_id>/send", methods=["POST"], endpoint="invoice_send")
@page("invoices.write")
def invoice_send(invoice_id: str):
    """Send (or send again) the invoice with a new portal link, emailed when the customer has an address."""
    number = parse_id(invoice_id)
    root, sender = public_root(), sender_for("email", current_app.config)
    sent = portal.send_invoice(g.tenant, g.actor, number, root, sender)
    notice = "Sent. " + (sent.no_email or "The customer was emailed the link below.")
    return _invoice_page(number, {}, {}, 200, notice=notice, link=sent.link)


@bp.route("/invoices/<invoice_id>/payments", methods=["POST"], endpoint="invoice_pay")
@page("payments.write")
def invoice_pay(invoice_id: str):
    """Record a payment taken at the counter: method and amount (never card data)."""
    number = parse_id(invoice_id)
    invoices.get_invoice_or_404(_tenant_id(), number)
    errors, typed = (
        {},
        {"method": request.form.get("method", "")[:20], "amount": request.form.get("amount", "")[:20]},
    )
    method = _field("method", 20, errors, required=True)
    if "method" not in errors and method not in METHODS:
        errors["method"] = "Choose how the customer paid."
    amount = _amount("amount", errors)
    status = 400
    if not errors:
        try:
            invoices.take_payment(_tenant_id(), g.actor, number, {"amount": amount, "method": method})
        except ApiError as error:
            status = _refused(error, errors, "amount")
        else:
            return _invoice_page(number, {}, {}, 200, notice=f"Payment of {typed['amount']} recorded.")
    return _invoice_page(number, {"pay": typed}, {"pay": errors}, status)


@bp.route("/invoices/<invoice_id>/refunds", methods=["POST"], endpoint="invoice_refund")
@page("payments.write")
def invoice_refund(invoice_id: str):
    """Refund part (or all that is left) of one of the invoice's payments."""
    number = parse_id(invoice_id)
    invoices.get_invoice_or_404(_tenant_id(), number)
    errors = {}
    payment_text = _field("payment_id", 20, errors, required=True) or ""
    typed = {"payment_id": payment_text, "amount": request.form.get("amount", "")[:20]}
    payment = None
    if payment_text.isascii() and payment_text.isdigit() and len(payment_text) <= 10:
        payment = invoices.invoice_payment(_tenant_id(), number, int(payment_text))
    if payment is None:
        errors["payment_id"] = "Choose one of this invoice's payments."
    amount = _amount("amount", errors, required=False)
    reason = _field("reason", REASON_MAX, errors)
    typed["reason"] = reason or ""
    status = 400
    if not errors:
        try:
            invoices.refund_payment_by_id(_tenant_id(), g.actor, payment.id, amount, reason)
        except ApiError as error:
            status = _refused(error, errors, "amount")
        else:
            return _invoice_page(number, {}, {}, 200, notice="Refund recorded.")
    return _invoice_page(number, {"refund": typed}, {"refund": errors}, status)


@bp.route("/invoices/<invoice_id>/void", methods=["POST"], endpoint="invoice_void")
@page("invoices.write")
def invoice_void(invoice_id: str):
    """Void an unpaid invoice: invoice.voided."""
    number = parse_id(invoice_id)
    invoices.get_invoice_or_404(_tenant_id(), number)
    errors = {}
    reason = _field("reason", REASON_MAX, errors)
    status = 400
    if not errors:
        try:
            invoices.void_invoice_by_id(_tenant_id(), g.actor, number, reason)
        except ApiError as error:
            status = _refused(error, errors, "reason")
        else:
            return _invoice_page(number, {}, {}, 200, notice="Invoice voided.")
    return _invoice_page(number, {"void": {"reason": reason or ""}}, {"void": errors}, status)


def _amount(name: str, errors: dict, required: bool = True) -> int | None:
    if required and "".join(request.form.getlist(name)).strip() == "":
        errors[name] = "Type the amount, such as 45.00."
        return None
    text = _field(name, 20, errors)
    if text is None:
        return None
    amount = cents(text) if text.isascii() else None
    if amount is None or not 1 <= amount <= 2_147_483_647:
        errors[name] = "An amount such as 45.00."
        return None
    return amount


def _invoice_page(number: int, typed: dict, errors: dict, status: int, notice=None, link=None):
    found = invoices.retrieve_invoice(_tenant_id(), number)
    payments = invoices.payments_of_invoice(_tenant_id(), found.id)
    return render(
        "console/invoice.html",
        status,
        section="console.invoices",
        invoice=found,
        payments=payments,
        methods=METHODS,
        typed=typed,
        errors=errors,
        notice=notice,
        link=link,
        money=money,
    )


def _document_form(kind: str, typed: dict, errors: dict, status: int):
    lines = typed.get("lines") or []
    lines = lines + [{"description": "", "quantity": "1", "price": ""}] * max(0, LINE_ROWS - len(lines))
    return render(
        "console/document_new.html",
        status,
        section=f"console.{kind}s",
        kind=kind,
        typed=typed,
        lines=lines,
        errors=errors,
        currencies=CURRENCIES,
    )

"""The customer's estimate and invoice pages at /portal/estimates/<token> and /portal/invoices/<token>:
the document with the shop's name, its lines and totals, and for a sent estimate the approve and
decline forms (the estimates' own decide_estimate, as the customer; evidence kept on the estimate)."""

from types import SimpleNamespace

from flask import make_response, redirect, render_template, request, url_for

from shop.domain import actor
from shop.domain.records import invoices, portal
from shop.models import Estimate, Invoice
from shop.platform.auth import client_address
from shop.platform.errors import ApiError
from shop.portal import forms, humane
from shop.portal.blueprint import bp, public

COOKIE_PATH = "/portal/"
NAME_MAX, REASON_MAX = 255, 500
NOT_FOUND = "This link does not work. It may be mistyped, or the shop has sent you a newer one."


def _estimate_or_404(token: str) -> Estimate:
    found = portal.by_token(Estimate, token)
    if found is None:
        raise ApiError(404, "not_found", NOT_FOUND)
    return found


@bp.route("/portal/estimates/<token>", methods=["GET"])
@public
def estimate(token: str):
    """The estimate, and (while it waits for the customer) the approve and decline forms."""
    return _estimate_page(_estimate_or_404(token), token, {}, {}, 200)


@bp.route("/portal/estimates/<token>/approve", methods=["POST"])
@public
def approve(token: str):
    """The customer approves, typing their name: estimate.approved with approved_by `customer`."""
    found = _estimate_or_404(token)
    forms.check_not_a_bot()
    typed, errors = {}, {}
    try:
        typed["name"] = forms.value("name", NAME_MAX)
        if not typed["name"]:
            errors["name"] = "Type your name to approve."
    except ApiError as error:
        errors["name"] = error.message
    return _decide(found, token, "approved", typed, errors)


@bp.route("/portal/estimates/<token>/decline", methods=["POST"])
@public
def decline(token: str):
    """The customer declines, with a reason if they like: estimate.declined with declined_by `customer`."""
    found = _estimate_or_404(token)
    forms.check_not_a_bot()
    typed, errors = {}, {}
    try:
        typed["reason"] = forms.value("reason", REASON_MAX, multiline=True)
    except ApiError as error:
        errors["reason"] = error.message
    return _decide(found, token, "declined", typed, errors)


def _decide(found: Estimate, token: str, status: str, typed: dict, errors: dict):
    if errors:
        return _estimate_page(found, token, typed, errors, 400)
    evidence = {
        "name": typed.get("name"),
        "ip_address": client_address(),
        "user_agent": request.headers.get("User-Agent", "")[:1000] or None,
    }
    try:
        portal.decide(found, actor.customer("portal"), status, evidence, typed.get("reason"))
    except ApiError as error:
        if error.status >= 500:
            raise
        return _estimate_page(found, token, typed, {"form": error.message}, error.status)
    return redirect(url_for("portal.estimate", token=token), 303)


@bp.route("/portal/invoices/<token>", methods=["GET"])
@public
def invoice(token: str):
    """The invoice with its lines, total, what has been paid and what is due."""
    found = portal.by_token(Invoice, token)
    if found is None:
        raise ApiError(404, "not_found", NOT_FOUND)
    invoices.with_amounts(found)
    return _page(
        "portal/invoice.html",
        found,
        200,
        invoice=found,
        paid=humane.money(found.amount_paid - found.amount_refunded, found.currency),
        due=humane.money(found.amount_due, found.currency),
    )


def _estimate_page(found: Estimate, token: str, typed: dict, errors: dict, status: int):
    found = Estimate.get_by_id(found.id)  # as stored now (a refused decision changed nothing)
    return _page(
        "portal/estimate.html",
        found,
        status,
        estimate=found,
        token=token,
        typed=typed,
        errors=errors,
        started=forms.started_stamp(),
        decided_on=_decided_on(found),
    )


def _decided_on(found: Estimate) -> str | None:
    moment = found.approved_at or found.declined_at
    if moment is None:
        return None
    return humane.moment_label(moment, found.tenant.timezone)


def _page(template: str, document, status: int, **context):
    currency = document.currency
    lines = [
        {
            "description": item["description"],
            "quantity": item["quantity"],
            "unit": humane.money(item["unit_amount"], currency),
            "amount": humane.money(item["amount"], currency),
        }
        for item in document.line_items or []
    ]
    token = forms.csrf_token()
    html = render_template(
        template,
        shop=SimpleNamespace(tenant=document.tenant),
        lines=lines,
        total=humane.money(document.total, currency),
        csrf_token=token,
        honeypot=forms.HONEYPOT,
        **context,
    )
    response = make_response(html, status)
    forms.set_csrf_cookie(response, token, COOKIE_PATH)
    return response

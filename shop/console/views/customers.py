"""Customers: search by name, email or phone, create, and edit (with SMS consent); leads: capture,
work their status, and convert one to a ticket in one step."""

from flask import g, redirect, request, url_for

from schemas.customers import CustomerCreateSchema, CustomerUpdateSchema
from schemas.records import OPEN_LEAD_STATUSES, LeadConvertSchema, LeadCreateSchema, LeadUpdateSchema
from shop.console import forms, front_office, nav
from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import query_value, render
from shop.domain.records import customers, leads, tickets
from shop.models import Lead
from shop.platform import auth
from shop.platform.errors import ApiError
from shop.platform.ids import parse_id

nav.add(nav.NavItem("console.customers", "Customers", "customers.read"))
nav.add(nav.NavItem("console.leads", "Leads", "leads.read"))
LEADS_SHOWN = 200


def _customer_fields(create: bool) -> dict:
    """The customer form for the API's schema (an emptied email, phone or source clears it on edit)."""
    values = {
        "display_name": forms.text("display_name", 255, required=False) or "",
        "email": forms.text("email", 320, required=False),
        "phone": forms.text("phone", 50, required=False),
        "sms_consent": "sms_consent" in request.form,
        "source": forms.text("source", 64, required=False),
    }
    if create:
        values = {name: value for name, value in values.items() if value is not None}
    return forms.load(CustomerCreateSchema() if create else CustomerUpdateSchema(), values)


@bp.route("/customers", methods=["GET", "POST"], endpoint="customers")
@page("customers.read")
def customers_page():
    """The list (searched when asked) and the new-customer form."""
    errors, values = {}, {}
    if request.method == "POST":
        auth.check_scope(g.principal, "customers.write")
        try:
            created = customers.create_customer(
                g.tenant.id, _customer_fields(create=True), front_office.acting("dashboard")
            )
            return redirect(url_for("console.customer", customer_id=created["id"], done="created"), 303)
        except ApiError as error:
            errors, values = front_office.refused(error), request.form
    search = query_value("q", 100)
    return render(
        "console/customers.html",
        400 if errors else 200,
        section="console.customers",
        rows=front_office.customers(g.tenant.id, search, 200),
        search=search or "",
        errors=errors,
        values=values,
        can_write="customers.write" in g.principal.scopes,
    )


@bp.route("/customers/<customer_id>", methods=["GET", "POST"])
@page("customers.read")
def customer(customer_id: str):
    """One customer: edit the details and consent; their tickets."""
    number = parse_id(customer_id, "customer_id")
    found = customers.get_customer_or_404(g.tenant.id, number)
    errors, values = {}, None
    if request.method == "POST":
        auth.check_scope(g.principal, "customers.write")
        try:
            fields = _customer_fields(create=False)
            customers.update_customer(
                g.tenant.id, {**fields, "id": found.id}, front_office.acting("dashboard")
            )
            return redirect(url_for("console.customer", customer_id=found.id, done="saved"), 303)
        except ApiError as error:
            errors, values = front_office.refused(error), request.form
    notices = {"created": "Customer created.", "saved": "Changes saved."}
    return render(
        "console/customer.html",
        400 if errors else 200,
        section="console.customers",
        customer=found,
        tickets=list(
            tickets.visible_tickets(g.tenant.id).where(tickets.Ticket.customer == found.id).limit(200)
        ),
        errors=errors,
        values=values,
        notice=notices.get(query_value("done", 10)),
        can_write="customers.write" in g.principal.scopes,
    )


@bp.route("/leads", methods=["GET", "POST"], endpoint="leads")
@page("leads.read")
def leads_page():
    """The leads, newest first, each with its status form and a convert button; the capture form."""
    errors, values = {}, {}
    if request.method == "POST":
        auth.check_scope(g.principal, "leads.write")
        body = {
            "name": forms.text("name", 255, required=False) or "",
            "email": forms.text("email", 320, required=False),
            "phone": forms.text("phone", 50, required=False),
            "source": forms.text("source", 64, required=False),
        }
        try:
            fields = forms.load(LeadCreateSchema(), {k: v for k, v in body.items() if v is not None})
            leads.create_lead(g.tenant.id, fields, front_office.acting("dashboard"))
            return redirect(url_for("console.leads", done="created"), 303)
        except ApiError as error:
            errors, values = front_office.refused(error), request.form
    return _leads_page(errors, values, 400 if errors else 200)


def _leads_page(errors: dict, values, status: int = 200, row_errors: dict | None = None):
    notices = {"created": "Lead captured.", "saved": "Lead saved.", "converted": "Lead converted."}
    rows = list(
        Lead.for_tenant(g.tenant.id).order_by(Lead.created_at.desc(), Lead.id.desc()).limit(LEADS_SHOWN)
    )
    for row in rows:
        row.captured = front_office.human(row.created_at)
    return render(
        "console/leads.html",
        status,
        section="console.leads",
        rows=rows,
        statuses=OPEN_LEAD_STATUSES,
        errors=errors,
        row_errors=row_errors or {},
        values=values,
        notice=notices.get(query_value("done", 10)),
        can_write="leads.write" in g.principal.scopes,
    )


@bp.route("/leads/<lead_id>", methods=["POST"])
@page("leads.write")
def lead_edit(lead_id: str):
    """A lead's pipeline status (new, contacted, qualified, lost)."""
    found = leads.get_lead_or_404(g.tenant.id, parse_id(lead_id, "lead_id"))
    try:
        fields = forms.load(LeadUpdateSchema(), {"status": forms.text("status", 20) or ""})
        leads.update_lead(g.tenant.id, {**fields, "id": found.id}, front_office.acting("dashboard"))
    except ApiError as error:
        if error.status not in (400, 422):
            raise
        return _leads_page({}, {}, error.status, {found.id: error.message})
    return redirect(url_for("console.leads", done="saved") + f"#lead-{found.id}", 303)


@bp.route("/leads/<lead_id>/convert", methods=["POST"])
@page("leads.write")
def lead_convert(lead_id: str):
    """Convert in one step: a new customer from the lead (or the one it has) and a new ticket."""
    found = leads.get_lead_or_404(g.tenant.id, parse_id(lead_id, "lead_id"))
    auth.check_scope(g.principal, "tickets.write")
    auth.check_scope(g.principal, "customers.write")
    try:
        subject = forms.text("subject", 255, required=False)
        fields = forms.load(LeadConvertSchema(), {"subject": subject} if subject else {})
        converted = leads.convert_lead(
            g.tenant.id, {**fields, "id": found.id}, front_office.acting("dashboard")
        )
    except ApiError as error:
        if error.status not in (400, 422):
            raise
        return _leads_page({}, {}, error.status, {found.id: error.message})
    return redirect(
        url_for("console.ticket", ticket_id=converted["converted_ticket_id"], done="created"), 303
    )

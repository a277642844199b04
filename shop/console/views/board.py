"""The queue board (a column per ticket status, a card per ticket, moved by a form or a drag), the
ticket panel (fields, status, edit, timeline, send a message) and a new ticket."""

from flask import g, redirect, request, url_for

from schemas.customers import CustomerCreateSchema
from schemas.records import TicketCreateSchema, TicketUpdateSchema
from shop.console import forms, front_office, nav
from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import query_value, render
from shop.db import write_transaction
from shop.domain.records import customers, tickets
from shop.models.records import TICKET_PRIORITIES
from shop.platform import auth
from shop.platform.errors import ApiError

nav.add(nav.NavItem("console.board", "Board", "tickets.read"))
TICKET_TEXT = {"subject": 255, "description": 10_000, "device": 255, "serial_number": 255}


@bp.route("/board", methods=["GET"])
@page("tickets.read")
def board():
    """The queue board: a column per status of the shop's `ticket_statuses`."""
    moved = query_value("moved", 10)
    return _board_page(notice=f"Ticket {moved} moved." if moved and moved.isdigit() else None)


def _board_page(status: int = 200, errors: dict | None = None, notice: str | None = None):
    return render(
        "console/board.html",
        status,
        section="console.board",
        columns=front_office.board(g.tenant.id),
        statuses=tickets.ticket_statuses(g.tenant.id),
        can_write="tickets.write" in g.principal.scopes,
        errors=errors or {},
        notice=notice,
    )


@bp.route("/board/move", methods=["POST"])
@page("tickets.write")
def board_move():
    """A card's form (or a card dropped on a column): the status changes with change_source queue_drag."""
    ticket_id = forms.record_id("ticket_id")
    tickets.activity_ticket(g.tenant.id, ticket_id, "ticket_id")  # another shop's ticket: 404
    try:
        status = forms.text("status", 64)
        tickets.change_ticket_status(
            g.tenant.id, {"id": ticket_id, "status": status}, front_office.acting("queue_drag")
        )
    except ApiError as error:
        message = next(iter(front_office.refused(error).values()))
        return _board_page(400, errors={ticket_id: message})
    return redirect(url_for("console.board", moved=ticket_id) + f"#ticket-{ticket_id}", 303)


@bp.route("/tickets/new", methods=["GET", "POST"])
@page("tickets.write")
def ticket_new():
    """Open a ticket for a chosen customer or one created in the same form."""
    if request.method == "GET":
        return _ticket_form_page({}, {})
    try:
        created = _create_ticket()
    except ApiError as error:
        return _ticket_form_page(request.form, front_office.refused(error), 400)
    return redirect(url_for("console.ticket", ticket_id=created["id"], done="created"), 303)


def _create_ticket() -> dict:
    fields = forms.load(TicketCreateSchema(), _ticket_fields(editing=False))
    new_name = forms.text("new_customer_name", 255, required=False)
    contact = None
    if new_name:
        auth.check_scope(g.principal, "customers.write")
        contact = forms.load(
            CustomerCreateSchema(),
            _present(
                display_name=new_name,
                email=forms.text("new_customer_email", 320, required=False),
                phone=forms.text("new_customer_phone", 50, required=False),
                sms_consent="new_customer_sms_consent" in request.form,
            ),
        )
    doer = front_office.acting("dashboard")
    with write_transaction():  # the new customer and the ticket, or neither
        if contact is not None:
            fields["customer_id"] = int(customers.create_customer(g.tenant.id, contact, doer)["id"])
        return tickets.create_ticket(g.tenant.id, fields, doer)


def _present(**values) -> dict:
    return {name: value for name, value in values.items() if value is not None}


def _ticket_fields(editing: bool) -> dict:
    """The ticket form's values for the API's schema: an emptied optional field clears it on edit."""
    values = {name: forms.text(name, limit, required=False) for name, limit in TICKET_TEXT.items()}
    values["customer_id"] = forms.text("customer_id", 20, required=False)
    assignee = forms.text("assigned_user_id", 20, required=False)
    values["assigned_user_id"] = (
        int(assignee) if assignee and assignee.isascii() and assignee.isdigit() else assignee
    )
    values["priority"] = forms.text("priority", 16, required=False)
    values["due_at"] = front_office.parse_local(forms.text("due_at", 40, required=False))
    if editing:
        if values["priority"] is None:
            del values["priority"]  # a select always sends one; absent: unchanged
        if values["subject"] is None:
            values["subject"] = ""  # required: the schema says so beside the field
        return values
    return _present(**values)


def _ticket_form_page(values, errors: dict, status: int = 200):
    return render(
        "console/ticket_new.html",
        status,
        section="console.board",
        values=values,
        errors=errors,
        customers=front_office.customers(g.tenant.id),
        teammates=front_office.teammates(g.tenant.id),
        priorities=TICKET_PRIORITIES,
        chosen_customer=query_value("customer", 20),
    )


@bp.route("/tickets/<ticket_id>", methods=["GET"])
@page("tickets.read")
def ticket(ticket_id: str):
    """The ticket panel."""
    notices = {"created": "Ticket created.", "saved": "Changes saved.", "moved": "Status changed."}
    return _panel(
        tickets.activity_ticket(g.tenant.id, ticket_id), notice=notices.get(query_value("done", 10))
    )


def _panel(found, status: int = 200, errors: dict | None = None, values=None, notice=None):
    return render(
        "console/ticket.html",
        status,
        section="console.board",
        ticket=found,
        customer=found.customer if found.customer_id else None,
        assignee=next(
            (u for u in front_office.teammates(g.tenant.id) if u.id == found.assigned_user_id), None
        ),
        due=front_office.human(found.due_at),
        created=front_office.human(found.created_at),
        due_input=front_office.local_input(found.due_at),
        statuses=tickets.ticket_statuses(g.tenant.id),
        customers=_with(front_office.customers(g.tenant.id), found.customer if found.customer_id else None),
        teammates=front_office.teammates(g.tenant.id),
        priorities=TICKET_PRIORITIES,
        timeline=front_office.timeline(g.tenant.id, found),
        can_write="tickets.write" in g.principal.scopes,
        can_send="messages.write" in g.principal.scopes,
        errors=errors or {},
        values=values,
        notice=notice,
    )


def _with(offered: list, current) -> list:
    """The customers a select offers, with the ticket's own even beyond the list's limit (an edit
    must not clear it unasked)."""
    if current is not None and all(c.id != current.id for c in offered):
        return [current, *offered]
    return offered


@bp.route("/tickets/<ticket_id>/status", methods=["POST"])
@page("tickets.write")
def ticket_status(ticket_id: str):
    """The panel's status form: change_source ticket_panel."""
    found = tickets.activity_ticket(g.tenant.id, ticket_id)
    try:
        status = forms.text("status", 64)
        tickets.change_ticket_status(
            g.tenant.id, {"id": found.id, "status": status}, front_office.acting("ticket_panel")
        )
    except ApiError as error:
        return _panel(found, 400, errors=front_office.refused(error))
    return redirect(url_for("console.ticket", ticket_id=found.id, done="moved"), 303)


@bp.route("/tickets/<ticket_id>", methods=["POST"])
@page("tickets.write")
def ticket_edit(ticket_id: str):
    """The panel's edit form: the changed fields (ticket.updated when one really changed)."""
    found = tickets.activity_ticket(g.tenant.id, ticket_id)
    try:
        fields = forms.load(TicketUpdateSchema(), _ticket_fields(editing=True))
        tickets.update_ticket(g.tenant.id, {**fields, "id": found.id}, front_office.acting("dashboard"))
    except ApiError as error:
        return _panel(found, 400, errors=front_office.refused(error), values=request.form)
    return redirect(url_for("console.ticket", ticket_id=found.id, done="saved"), 303)

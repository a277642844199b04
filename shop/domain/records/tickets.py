"""Tickets as the public surface sees them (hidden or soft-deleted ones do not exist there), and the
changes every face makes to them through the same functions."""

from schemas.records import TicketSchema
from shop import clock
from shop.db import locked, write_transaction
from shop.domain.actor import Actor
from shop.domain.events.outbox import emit
from shop.domain.records.changes import apply_changes, create_record, event_data
from shop.models import Customer, Tenant, Ticket, User
from shop.models.records import DEFAULT_TICKET_STATUSES
from shop.platform.errors import ApiError, not_found
from shop.platform.pagination import paginate

# GET /tickets/<id> answers, and ticket.created and ticket.updated carry, the ticket as this dumps it
TICKET = TicketSchema()
ORDER = [(Ticket.created_at, True), (Ticket.id, True)]


def visible_tickets(tenant_id: str):
    """The tenant's tickets that are neither hidden nor soft-deleted."""
    return Ticket.for_tenant(tenant_id).where(~Ticket.hidden & ~Ticket.deleted)


def ticket_number(ticket_id) -> int | None:
    """The integer id a ticket id (digit string or integer) names, or None if it names none."""
    text = str(ticket_id)
    if not text.isascii() or not text.isdigit() or len(text) > 10:
        return None
    return int(text)


def get_visible_ticket(tenant_id: str, ticket_id, allow_billing_only: bool = True) -> Ticket | None:
    """A visible ticket by its id (string or integer), or None."""
    number = ticket_number(ticket_id)
    if number is None:
        return None
    query = visible_tickets(tenant_id).where(Ticket.id == number)
    if not allow_billing_only:
        query = query.where(~Ticket.billing_only)
    return query.first()


def set_ticket_flag(tenant_id: str, data: dict, flag: str) -> dict:
    """In-app activity: hide or soft-delete a ticket (no catalog event; it just disappears)."""
    number = _ticket_id(data)
    ticket = Ticket.for_tenant(tenant_id).where(Ticket.id == number).first()
    if ticket is None:
        raise not_found("ticket", number)
    setattr(ticket, flag, True)
    ticket.save()
    return {"object": "ticket", "id": str(ticket.id), "hidden": ticket.hidden, "deleted": ticket.deleted}


def _ticket_id(data: dict) -> int:
    number = ticket_number(data.get("id", ""))
    if number is None:
        raise ApiError(400, "invalid_field", "id must be a ticket id (a digit string).", param="id")
    return number


def hide_ticket(tenant_id: str, data: dict) -> dict:
    return set_ticket_flag(tenant_id, data, "hidden")


def delete_ticket(tenant_id: str, data: dict) -> dict:
    return set_ticket_flag(tenant_id, data, "deleted")


def activity_ticket(tenant_id: str, ticket_id: int, param: str = "id") -> Ticket:
    """A visible ticket of the tenant, or 404: hidden and deleted tickets are off the public surface."""
    ticket = get_visible_ticket(tenant_id, ticket_id)
    if ticket is None:
        raise not_found("ticket", ticket_id, param)
    return ticket


def _check_customer(tenant_id: str, customer_id) -> None:
    if customer_id is None:
        return
    if not Customer.for_tenant(tenant_id).where(Customer.id == customer_id).exists():
        raise not_found("customer", customer_id, "customer_id")


def ticket_statuses(tenant_id: str) -> list[str]:
    """The statuses the shop's tickets move through (its `ticket_statuses`, else the default five)."""
    statuses = Tenant.select(Tenant.ticket_statuses).where(Tenant.id == tenant_id).scalar()
    return list(statuses or DEFAULT_TICKET_STATUSES)


def _check_status(tenant_id: str, status: str, actor: Actor | None) -> None:
    """400 for a status outside the shop's list; in-app activity records what happened elsewhere
    with the status names it was given (the spec's status_changed carries free names)."""
    if actor is None or actor.kind == "in_app":
        return
    statuses = ticket_statuses(tenant_id)
    if status not in statuses:
        raise ApiError(
            400,
            "invalid_field",
            f"status: must be one of the shop's ticket statuses: {', '.join(statuses)}.",
            param="status",
        )


def _check_teammate(tenant_id: str, user_id) -> None:
    """assigned_user_id names a teammate of the shop (or is null), as on conversations."""
    if user_id is not None and not User.for_tenant(tenant_id).where(User.id == user_id).exists():
        message = f"assigned_user_id: no teammate {user_id} in this shop."
        raise ApiError(400, "invalid_field", message, param="assigned_user_id")


def _check_fields(tenant_id: str, fields: dict, actor: Actor | None) -> None:
    if "status" in fields:
        _check_status(tenant_id, fields["status"], actor)
    if "customer_id" in fields:
        _check_customer(tenant_id, fields["customer_id"])
    if "assigned_user_id" in fields:
        _check_teammate(tenant_id, fields["assigned_user_id"])


def list_tickets(tenant_id: str, args: dict) -> dict:
    """One page of the shop's visible tickets, newest first, by status and customer when asked."""
    query = visible_tickets(tenant_id)
    if "status" in args:
        query = query.where(Ticket.status == args["status"])
    if "customer_id" in args:
        query = query.where(Ticket.customer == args["customer_id"])
    return paginate(query, ORDER, args["limit"], args["cursor"]).envelope()


def get_ticket(tenant_id: str, ticket_id: int) -> dict:
    """GET /tickets/<id>: a visible ticket as its events carry it (hidden or deleted: 404)."""
    return TICKET.dump(activity_ticket(tenant_id, ticket_id))


def new_ticket(tenant_id: str, fields: dict, actor: Actor | None = None) -> Ticket:
    """Create a ticket (the id given is kept) and emit ticket.created."""
    return create_record(
        tenant_id,
        Ticket,
        fields,
        "ticket",
        TICKET,
        check=lambda: _check_fields(tenant_id, fields, actor),
        actor=actor,
    )


def create_ticket(tenant_id: str, fields: dict, actor: Actor) -> dict:
    """A repair ticket is opened, in the shop's first status unless one is given; ticket.created."""
    with write_transaction():
        fields.setdefault("status", ticket_statuses(tenant_id)[0])
        return TICKET.dump(new_ticket(tenant_id, fields, actor))


def update_ticket(tenant_id: str, fields: dict, actor: Actor) -> dict:
    """A ticket's fields and/or status change (`fields["id"]` names it): ticket.status_changed (lean)
    for a real transition, then ticket.updated (the ticket after the change) when another field
    really changed; nothing for values it already had.

    The ticket's row is locked first (PostgreSQL; SQLite's write transaction holds it already), so a
    status change racing another reads the status the other left: each is a real transition from
    the status before it, or none, and no transition goes unreported.
    """
    with write_transaction():
        ticket = _locked_ticket(tenant_id, fields.pop("id"))
        _check_fields(tenant_id, fields, actor)
        status = fields.pop("status", ticket.status)
        previous = ticket.status
        changed = apply_changes(ticket, fields)
        if status != previous:
            _transition(tenant_id, ticket, status, actor)
        data = TICKET.dump(ticket)
        if changed:
            emit(tenant_id, "ticket.updated", event_data(data, actor))
        return data


def _locked_ticket(tenant_id: str, ticket_id) -> Ticket:
    number = ticket_number(ticket_id)
    ticket = None
    if number is not None:
        ticket = locked(visible_tickets(tenant_id).where(Ticket.id == number), "NO KEY UPDATE").first()
    if ticket is None:
        raise not_found("ticket", ticket_id)
    return ticket


def _transition(tenant_id: str, ticket: Ticket, status: str, actor: Actor) -> None:
    """Move the status and emit the spec's lean ticket.status_changed."""
    previous = ticket.status
    ticket.status = status
    ticket.updated_at = clock.now()
    ticket.save()
    emit(
        tenant_id,
        "ticket.status_changed",
        {
            "object": "ticket",
            "id": str(ticket.id),
            "status": ticket.status,
            "previous_status": previous,
            "changed_at": clock.isoformat(ticket.updated_at),
            "changed_by": actor.name,
            "change_source": actor.source,
            "source_kind": "observed",
        },
    )


def change_ticket_status(tenant_id: str, fields: dict, actor: Actor) -> dict:
    """A status change alone (the board, the panel, in-app activity); see update_ticket. What the
    browser's address and agent were is recorded nowhere an event reaches."""
    return update_ticket(tenant_id, {"id": fields["id"], "status": fields["status"]}, actor)

"""Tickets as the public surface sees them: hidden or soft-deleted tickets do not exist there."""

from schemas.records import TicketSchema
from shop import clock
from shop.domain.events.outbox import emit
from shop.domain.records.changes import create_record, save_changes
from shop.models import Customer, Ticket
from shop.platform.errors import ApiError, not_found

# ticket.created and ticket.updated carry the ticket as this schema dumps it
TICKET = TicketSchema()


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


def new_ticket(tenant_id: str, fields: dict) -> Ticket:
    """Create a ticket (the id given is kept) and emit ticket.created."""
    return create_record(
        tenant_id,
        Ticket,
        fields,
        "ticket",
        TICKET,
        check=lambda: _check_customer(tenant_id, fields.get("customer_id")),
    )


def create_ticket(tenant_id: str, fields: dict) -> dict:
    """In-app activity: a repair ticket is opened."""
    return TICKET.dump(new_ticket(tenant_id, fields))


def update_ticket(tenant_id: str, fields: dict) -> dict:
    """In-app activity: ticket fields other than status edited; ticket.updated only on a real change."""
    ticket = activity_ticket(tenant_id, fields.pop("id"))
    if "customer_id" in fields:
        _check_customer(tenant_id, fields["customer_id"])
    return save_changes(tenant_id, "ticket.updated", TICKET, ticket, fields)


def change_ticket_status(tenant_id: str, fields: dict) -> dict:
    """In-app activity: a status change; ticket.status_changed (lean) fires only for a real transition."""
    ticket = activity_ticket(tenant_id, fields["id"])
    previous = ticket.status
    if fields["status"] != previous:
        ticket.status = fields["status"]
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
                "changed_by": fields["changed_by"],
                "change_source": fields["change_source"],
                "source_kind": "observed",
            },
        )
    return TICKET.dump(ticket)

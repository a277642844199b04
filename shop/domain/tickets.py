"""Tickets as the public surface sees them: hidden or soft-deleted tickets do not exist there."""

from shop.models import Ticket
from shop.platform.errors import ApiError


def visible_tickets(tenant_id: str):
    """The tenant's tickets that are neither hidden nor soft-deleted."""
    return Ticket.for_tenant(tenant_id).where(~Ticket.hidden & ~Ticket.deleted)


def find_visible_ticket(tenant_id: str, ticket_id, allow_billing_only: bool = True) -> Ticket | None:
    """A visible ticket by its id (string or integer), or None."""
    text = str(ticket_id)
    if not text.isascii() or not text.isdigit() or len(text) > 10:
        return None
    query = visible_tickets(tenant_id).where(Ticket.id == int(text))
    if not allow_billing_only:
        query = query.where(~Ticket.billing_only)
    return query.first()


def set_ticket_flag(tenant_id: str, data: dict, flag: str) -> dict:
    """In-app activity: hide or soft-delete a ticket (no catalog event; it just disappears)."""
    ticket = Ticket.for_tenant(tenant_id).where(Ticket.id == _ticket_id(data)).first()
    if ticket is None:
        raise ApiError(404, "not_found", f"No ticket {data.get('id')!r} in tenant {tenant_id}.", param="id")
    setattr(ticket, flag, True)
    ticket.save()
    return {"object": "ticket", "id": str(ticket.id), "hidden": ticket.hidden, "deleted": ticket.deleted}


def _ticket_id(data: dict) -> int:
    raw = str(data.get("id", ""))
    if not raw.isdigit() or len(raw) > 10:
        raise ApiError(400, "invalid_field", "id must be a ticket id (a digit string).", param="id")
    return int(raw)


def hide_ticket(tenant_id: str, data: dict) -> dict:
    return set_ticket_flag(tenant_id, data, "hidden")


def delete_ticket(tenant_id: str, data: dict) -> dict:
    return set_ticket_flag(tenant_id, data, "deleted")

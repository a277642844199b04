"""Leads: captured, updated, and converted to a repair ticket, by every face through the same functions."""

from schemas.records import LeadSchema
from shop import clock
from shop.db import locked, write_transaction
from shop.domain.activity import unprocessable
from shop.domain.actor import Actor
from shop.domain.records.changes import create_record, emit_record, save_changes
from shop.domain.records.customers import get_customer_or_404, new_customer
from shop.domain.records.tickets import activity_ticket, new_ticket, ticket_statuses
from shop.models import Lead
from shop.platform.errors import not_found
from shop.platform.pagination import paginate

# GET /leads/<id> answers, and lead.* carry, the lead as this schema dumps it
LEAD = LeadSchema()
ORDER = [(Lead.created_at, True), (Lead.id, True)]


def get_lead_or_404(tenant_id: str, lead_id: int, lock: bool = False) -> Lead:
    """The tenant's lead, or 404."""
    query = Lead.for_tenant(tenant_id).where(Lead.id == lead_id)
    lead = (locked(query, "NO KEY UPDATE") if lock else query).first()
    if lead is None:
        raise not_found("lead", lead_id)
    return lead


def list_leads(tenant_id: str, args: dict) -> dict:
    """One page of the shop's leads, newest first, in one status when asked."""
    query = Lead.for_tenant(tenant_id)
    if "status" in args:
        query = query.where(Lead.status == args["status"])
    return paginate(query, ORDER, args["limit"], args["cursor"]).envelope()


def get_lead(tenant_id: str, lead_id: int) -> dict:
    """GET /leads/<id>."""
    return LEAD.dump(get_lead_or_404(tenant_id, lead_id))


def create_lead(tenant_id: str, fields: dict, actor: Actor) -> dict:
    """A lead is captured (API, web form, phone call, walk-in); lead.created."""
    with write_transaction():
        lead = create_record(tenant_id, Lead, {"status": "new", **fields}, "lead", LEAD, actor=actor)
        return LEAD.dump(lead)


def update_lead(tenant_id: str, fields: dict, actor: Actor) -> dict:
    """Lead fields or its pipeline status edited (`fields["id"]` names it); lead.updated only on a
    real change; a converted lead is 422 (edit its customer or ticket instead)."""
    with write_transaction():
        lead = get_lead_or_404(tenant_id, fields.pop("id"), lock=True)
        if lead.status == "converted":
            raise unprocessable(f"Lead {lead.id} is converted; edit its customer or ticket instead.")
        return save_changes(tenant_id, "lead.updated", LEAD, lead, fields, actor)


def convert_lead(tenant_id: str, fields: dict, actor: Actor) -> dict:
    """A lead becomes a repair ticket (and a customer, unless one is named), in one transaction.

    Emits what the conversion causes, in order: customer.created (for a new customer),
    ticket.created (unless an existing ticket_id is linked), then lead.converted. A converted lead
    is 422 with nothing written.
    """
    with write_transaction():
        lead = get_lead_or_404(tenant_id, fields["id"], lock=True)
        if lead.status == "converted":
            raise unprocessable(f"Lead {lead.id} is already converted.")
        if "customer_id" in fields:
            customer = get_customer_or_404(tenant_id, fields["customer_id"], "customer_id")
        else:
            contact = {
                "display_name": lead.name,
                "email": lead.email,
                "phone": lead.phone,
                "source": lead.source or "lead",
            }
            customer = new_customer(tenant_id, contact, actor)
        if "ticket_id" in fields:
            ticket = activity_ticket(tenant_id, fields["ticket_id"], "ticket_id")
        else:
            subject = fields.get("subject") or f"Repair for {lead.name or 'lead ' + str(lead.id)}"
            first_status = ticket_statuses(tenant_id)[0]
            ticket = new_ticket(
                tenant_id, {"customer_id": customer.id, "subject": subject, "status": first_status}, actor
            )
        now = clock.now()
        lead.status, lead.customer, lead.converted_ticket = "converted", customer.id, ticket.id
        lead.converted_at = lead.updated_at = now
        lead.save()
        return emit_record(tenant_id, "lead.converted", LEAD, lead, actor)

"""Leads: captured, updated, and converted to a repair ticket."""

from schemas.records import LeadSchema
from shop import clock
from shop.domain.activity import unprocessable
from shop.domain.records.changes import create_record, emit_record, save_changes
from shop.domain.records.customers import get_customer_or_404, new_customer
from shop.domain.records.tickets import activity_ticket, new_ticket
from shop.models import Lead
from shop.platform.errors import not_found

# lead.* carry the lead as this schema dumps it
LEAD = LeadSchema()


def get_lead_or_404(tenant_id: str, lead_id: int) -> Lead:
    """The tenant's lead, or 404."""
    lead = Lead.for_tenant(tenant_id).where(Lead.id == lead_id).first()
    if lead is None:
        raise not_found("lead", lead_id)
    return lead


def create_lead(tenant_id: str, fields: dict) -> dict:
    """In-app activity: a lead is captured (web form, phone call, walk-in)."""
    return LEAD.dump(create_record(tenant_id, Lead, {"status": "new", **fields}, "lead", LEAD))


def update_lead(tenant_id: str, fields: dict) -> dict:
    """In-app activity: lead fields or its pipeline status edited; lead.updated only on a real change."""
    lead = get_lead_or_404(tenant_id, fields.pop("id"))
    if lead.status == "converted":
        raise unprocessable(f"Lead {lead.id} is converted; edit its customer or ticket instead.")
    return save_changes(tenant_id, "lead.updated", LEAD, lead, fields)


def convert_lead(tenant_id: str, fields: dict) -> dict:
    """In-app activity: a lead becomes a repair ticket (and a customer, unless one is named).

    Emits what the conversion causes, in order: customer.created (for a new customer),
    ticket.created (unless an existing ticket_id is linked), then lead.converted.
    """
    lead = get_lead_or_404(tenant_id, fields["id"])
    if lead.status == "converted":
        raise unprocessable(f"Lead {lead.id} is already converted.")
    if "customer_id" in fields:
        customer = get_customer_or_404(tenant_id, fields["customer_id"], "customer_id")
    else:
        customer = new_customer(
            tenant_id, {"display_name": lead.name, "email": lead.email, "phone": lead.phone}
        )
    if "ticket_id" in fields:
        ticket = activity_ticket(tenant_id, fields["ticket_id"], "ticket_id")
    else:
        subject = fields.get("subject") or f"Repair for {lead.name or 'lead ' + str(lead.id)}"
        ticket = new_ticket(tenant_id, {"customer_id": customer.id, "subject": subject})
    now = clock.now()
    lead.status, lead.customer, lead.converted_ticket = "converted", customer.id, ticket.id
    lead.converted_at = lead.updated_at = now
    lead.save()
    return emit_record(tenant_id, "lead.converted", LEAD, lead)

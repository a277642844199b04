"""Leads: captured, updated, and converted to a repair ticket."""

from schemas.activity import LeadConverted, LeadCreated, LeadUpdated
from shop import clock
from shop.domain.activity import not_found, observed, parse_data, refuse_taken_id, unprocessable
from shop.domain.events.outbox import emit
from shop.domain.records.changes import apply_changes, str_id
from shop.domain.records.customers import get_customer_or_404, new_customer
from shop.domain.records.tickets import activity_ticket, new_ticket
from shop.models import Lead


def lead_dto(lead: Lead) -> dict:
    """The lead as lead.* events carry it."""
    return {
        "object": "lead",
        "id": str(lead.id),
        "name": lead.name,
        "email": lead.email,
        "phone": lead.phone,
        "source": lead.source,
        "status": lead.status,
        "customer_id": str_id(lead.customer_id),
        "converted_ticket_id": str_id(lead.converted_ticket_id),
        "converted_at": clock.isoformat(lead.converted_at),
        "created_at": clock.isoformat(lead.created_at),
        "updated_at": clock.isoformat(lead.updated_at),
    }


def get_lead_or_404(tenant_id: str, lead_id: int) -> Lead:
    """The tenant's lead, or 404."""
    lead = Lead.for_tenant(tenant_id).where(Lead.id == lead_id).first()
    if lead is None:
        raise not_found("lead", lead_id)
    return lead


def _emit_lead(tenant_id: str, type_: str, lead: Lead) -> dict:
    dto = lead_dto(lead)
    emit(tenant_id, type_, observed(dto))
    return dto


def create_lead(tenant_id: str, data: dict) -> dict:
    """In-app activity: a lead is captured (web form, phone call, walk-in)."""
    fields = parse_data(LeadCreated, data)
    refuse_taken_id(Lead, fields, "lead")
    lead = Lead.create(tenant=tenant_id, status="new", created_at=clock.now(), **fields)
    return _emit_lead(tenant_id, "lead.created", lead)


def update_lead(tenant_id: str, data: dict) -> dict:
    """In-app activity: lead fields or its pipeline status edited; lead.updated only on a real change."""
    fields = parse_data(LeadUpdated, data)
    lead = get_lead_or_404(tenant_id, fields.pop("id"))
    if lead.status == "converted":
        raise unprocessable(f"Lead {lead.id} is converted; edit its customer or ticket instead.")
    if apply_changes(lead, fields):
        return _emit_lead(tenant_id, "lead.updated", lead)
    return lead_dto(lead)


def convert_lead(tenant_id: str, data: dict) -> dict:
    """In-app activity: a lead becomes a repair ticket (and a customer, unless one is named).

    Emits what the conversion causes, in order: customer.created (for a new customer),
    ticket.created (unless an existing ticket_id is linked), then lead.converted.
    """
    fields = parse_data(LeadConverted, data)
    lead = get_lead_or_404(tenant_id, fields["id"])
    if lead.status == "converted":
        raise unprocessable(f"Lead {lead.id} is already converted.")
    if "customer_id" in fields:
        customer = get_customer_or_404(tenant_id, fields["customer_id"], "customer_id")
    else:
        customer = new_customer(tenant_id, {"display_name": lead.name, "email": lead.email,
                                            "phone": lead.phone})
    if "ticket_id" in fields:
        ticket = activity_ticket(tenant_id, fields["ticket_id"], "ticket_id")
    else:
        subject = fields.get("subject") or f"Repair for {lead.name or 'lead ' + str(lead.id)}"
        ticket = new_ticket(tenant_id, {"customer_id": customer.id, "subject": subject})
    now = clock.now()
    lead.status, lead.customer, lead.converted_ticket = "converted", customer.id, ticket.id
    lead.converted_at = lead.updated_at = now
    lead.save()
    return _emit_lead(tenant_id, "lead.converted", lead)

"""Estimates of a ticket: sent to the customer, then approved or declined (lean events)."""

from schemas.records import EstimateSchema
from shop import clock
from shop.domain.activity import unprocessable
from shop.domain.events.outbox import emit
from shop.domain.records.changes import emit_record
from shop.domain.records.tickets import activity_ticket
from shop.models import Estimate
from shop.platform.errors import ApiError, not_found

DECIDABLE = ("draft", "sent")
# estimate.sent carries the estimate as this schema dumps it
ESTIMATE = EstimateSchema()


def approval_payload(estimate: Estimate) -> dict:
    """estimate.approved exactly as the spec's lean payload lists it."""
    return {
        "object": "estimate",
        "id": str(estimate.id),
        "ticket_id": str(estimate.ticket_id),
        "status": "approved",
        "approved_at": clock.isoformat(estimate.approved_at),
        "approved_by": estimate.approved_by,
        "source_kind": "observed",
    }


def decline_payload(estimate: Estimate) -> dict:
    """estimate.declined exactly as the spec's lean payload lists it."""
    return {
        "object": "estimate",
        "id": str(estimate.id),
        "ticket_id": str(estimate.ticket_id),
        "status": "declined",
        "declined_at": clock.isoformat(estimate.declined_at),
        "declined_by": estimate.declined_by,
        "decline_reason": estimate.decline_reason,
        "source_kind": "observed",
    }


def find_estimate(tenant_id: str, fields: dict) -> Estimate:
    """The tenant's estimate named by id (and ticket_id when given), on a visible ticket, or 404."""
    estimate = Estimate.for_tenant(tenant_id).where(Estimate.id == fields["id"]).first()
    if estimate is None or (estimate.ticket.hidden or estimate.ticket.deleted):
        raise not_found("estimate", fields["id"])
    if "ticket_id" in fields and fields["ticket_id"] != estimate.ticket_id:
        raise not_found("estimate", f"{fields['id']} on ticket {fields['ticket_id']}", "ticket_id")
    return estimate


def _draft(tenant_id: str, fields: dict) -> Estimate:
    """A new estimate for a ticket (drafting emits nothing: the catalog has no estimate.created)."""
    if "ticket_id" not in fields:
        raise ApiError(400, "missing_field", "ticket_id: a new estimate needs its ticket.", param="ticket_id")
    ticket = activity_ticket(tenant_id, fields.pop("ticket_id"), "ticket_id")
    estimate = Estimate.create(
        tenant=tenant_id, ticket=ticket, customer=ticket.customer_id, created_at=clock.now(), **fields
    )
    estimate.number = estimate.number or f"EST-{estimate.id}"
    return estimate


def send_estimate(tenant_id: str, fields: dict) -> dict:
    """In-app activity: an estimate is sent (an existing one by id, or a new one for ticket_id)."""
    if "id" not in fields:
        estimate = _draft(tenant_id, fields)
    else:
        estimate = find_estimate(tenant_id, fields)
        if set(fields) - {"id", "ticket_id"}:
            raise ApiError(
                400,
                "invalid_field",
                "number, currency and total are only for a new estimate (send without an id).",
                param=sorted(set(fields) - {"id", "ticket_id"})[0],
            )
    if estimate.status not in DECIDABLE:
        raise unprocessable(f"Estimate {estimate.id} is already {estimate.status}.")
    estimate.status, estimate.sent_at = "sent", clock.now()
    estimate.updated_at = estimate.sent_at
    estimate.save()
    return emit_record(tenant_id, "estimate.sent", ESTIMATE, estimate)


def decided_estimate(tenant_id: str, fields: dict) -> Estimate:
    """The estimate a decision is about: a known one, or one first seen now on its named ticket.

    The app may have sent an estimate the store never heard of; its decision (with the ticket it
    belongs to) is how the store learns of it. An id some estimate already has, of another ticket or
    another tenant, is refused as before, and so is a ticket that is missing, hidden or deleted.
    """
    if "ticket_id" not in fields or Estimate.select().where(Estimate.id == fields["id"]).exists():
        return find_estimate(tenant_id, fields)
    ticket = activity_ticket(tenant_id, fields["ticket_id"], "ticket_id")
    return Estimate.create(
        id=fields["id"],
        tenant=tenant_id,
        ticket=ticket,
        customer=ticket.customer_id,
        number=f"EST-{fields['id']}",
        status="sent",
        created_at=clock.now(),
    )


def _decide(tenant_id: str, fields: dict, status: str) -> Estimate:
    """Record the decision with its evidence (signature, address, browser) on the estimate."""
    estimate = decided_estimate(tenant_id, fields)
    if estimate.status not in DECIDABLE:
        raise unprocessable(f"Estimate {estimate.id} is already {estimate.status}.")
    estimate.status = status
    estimate.updated_at = clock.now()
    estimate.decision_signature = fields.get("signature_image")
    estimate.decision_ip_address = fields.get("ip_address")
    estimate.decision_user_agent = fields.get("user_agent")
    return estimate


def approve_estimate(tenant_id: str, fields: dict) -> dict:
    """In-app activity: the customer (portal) or staff approves an estimate."""
    estimate = _decide(tenant_id, fields, "approved")
    estimate.approved_at, estimate.approved_by = estimate.updated_at, fields["approved_by"]
    estimate.save()
    emit(tenant_id, "estimate.approved", approval_payload(estimate))
    return ESTIMATE.dump(estimate)


def decline_estimate(tenant_id: str, fields: dict) -> dict:
    """In-app activity: the customer (portal) or staff declines an estimate, with an optional reason."""
    estimate = _decide(tenant_id, fields, "declined")
    estimate.declined_at, estimate.declined_by = estimate.updated_at, fields["declined_by"]
    estimate.decline_reason = fields["decline_reason"]
    estimate.save()
    emit(tenant_id, "estimate.declined", decline_payload(estimate))
    return ESTIMATE.dump(estimate)

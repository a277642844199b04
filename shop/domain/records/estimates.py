"""Estimates of a ticket: drafted, sent to the customer, then approved or declined (lean events).

One function per change, whoever causes it: the API's routes and `shop activity` (its adapters at
the end of this module) both call draft_estimate, deliver_estimate and decide_estimate with an Actor.
"""

from schemas.records import EstimateSchema
from shop import clock
from shop.db import locked, write_transaction
from shop.domain import actor as actors
from shop.domain.activity import unprocessable
from shop.domain.actor import Actor
from shop.domain.events.outbox import emit
from shop.domain.records.changes import emit_as, priced_line_items, refuse_unless_draft
from shop.domain.records.tickets import activity_ticket
from shop.models import Estimate, Ticket
from shop.platform.errors import ApiError, not_found
from shop.platform.pagination import paginate

DECIDABLE = ("draft", "sent")
# through the API only a sent estimate is decided (DESIGN.md); the in-app path keeps DECIDABLE
DECIDABLE_BY_API = ("sent",)
# estimate.sent carries the estimate as this schema dumps it (the GET answer)
ESTIMATE = EstimateSchema()
ORDER = [(Estimate.id, True)]


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


def visible_estimates(tenant_id: str):
    """The tenant's estimates whose ticket is neither hidden nor deleted."""
    return (
        Estimate.for_tenant(tenant_id)
        .join(Ticket, on=Estimate.ticket == Ticket.id)
        .where(~Ticket.hidden & ~Ticket.deleted)
    )


def list_estimates(tenant_id: str, args: dict) -> dict:
    """One page of the tenant's visible estimates, newest first (filters ticket_id, status)."""
    query = visible_estimates(tenant_id)
    if "ticket_id" in args:
        query = query.where(Estimate.ticket == args["ticket_id"])
    if "status" in args:
        query = query.where(Estimate.status == args["status"])
    return paginate(query, ORDER, args["limit"], args["cursor"]).envelope()


def retrieve_estimate(tenant_id: str, estimate_id: int, lock: bool = False) -> Estimate:
    """The tenant's estimate on a visible ticket, or 404; `lock` holds its row to the transaction's end."""
    query = Estimate.for_tenant(tenant_id).where(Estimate.id == estimate_id)
    estimate = (locked(query) if lock else query).first()
    if estimate is None or estimate.ticket.hidden or estimate.ticket.deleted:
        raise not_found("estimate", estimate_id)
    return estimate


def draft_estimate(tenant_id: str, actor: Actor, fields: dict) -> Estimate:
    """A new draft estimate for a visible ticket, for the ticket's customer; drafting emits nothing
    (the catalog has no estimate.created). Line items price it; without them `total` is taken as given."""
    with write_transaction():
        ticket = activity_ticket(tenant_id, fields.pop("ticket_id"), "ticket_id")
        if "line_items" in fields:
            fields["line_items"], fields["total"] = priced_line_items(fields["line_items"])
        estimate = Estimate.create(
            tenant=tenant_id, ticket=ticket, customer=ticket.customer_id, created_at=clock.now(), **fields
        )
        estimate.number = estimate.number or f"EST-{estimate.id}"
        estimate.save()
        return estimate


def revise_estimate(tenant_id: str, actor: Actor, estimate_id: int, changes: dict) -> Estimate:
    """Change a draft's line items or currency (a sent or decided estimate is 422); emits nothing."""
    with write_transaction():
        estimate = retrieve_estimate(tenant_id, estimate_id, lock=True)
        refuse_unless_draft(estimate, "estimate")
        if "line_items" in changes:
            changes["line_items"], changes["total"] = priced_line_items(changes["line_items"])
        for name, value in changes.items():
            setattr(estimate, name, value)
        estimate.updated_at = clock.now()
        estimate.save()
        return estimate


def deliver_estimate(tenant_id: str, actor: Actor, estimate: Estimate) -> Estimate:
    """Send (or send again) an estimate that is not decided yet: estimate.sent with the estimate."""
    if estimate.status not in DECIDABLE:
        raise unprocessable(f"Estimate {estimate.id} is already {estimate.status}.")
    estimate.status, estimate.sent_at = "sent", clock.now()
    estimate.updated_at = estimate.sent_at
    estimate.save()
    emit_as(actor, tenant_id, "estimate.sent", ESTIMATE, estimate)
    return estimate


def send_estimate_by_id(tenant_id: str, actor: Actor, estimate_id: int) -> Estimate:
    """POST /estimates/<id>/send."""
    with write_transaction():
        return deliver_estimate(tenant_id, actor, retrieve_estimate(tenant_id, estimate_id, lock=True))


def decide_estimate(
    tenant_id: str, actor: Actor, estimate: Estimate, status: str, reason: str | None = None, evidence=None
) -> Estimate:
    """Approve or decline: the decision, who made it (the actor's name) and when, and the lean event.
    The customer's evidence (signature, address, browser) is kept on the estimate, never in an event."""
    allowed = DECIDABLE_BY_API if actor.api_driven else DECIDABLE
    if estimate.status not in allowed:
        if estimate.status in DECIDABLE:  # a draft, through the API
            raise unprocessable(f"Estimate {estimate.id} is a draft; only a sent estimate is decided.")
        raise unprocessable(f"Estimate {estimate.id} is already {estimate.status}.")
    estimate.status = status
    estimate.updated_at = clock.now()
    evidence = evidence or {}
    estimate.decision_signature = evidence.get("signature_image")
    estimate.decision_ip_address = evidence.get("ip_address")
    estimate.decision_user_agent = evidence.get("user_agent")
    if status == "approved":
        estimate.approved_at, estimate.approved_by = estimate.updated_at, actor.name
        payload = approval_payload
    else:
        estimate.declined_at, estimate.declined_by = estimate.updated_at, actor.name
        estimate.decline_reason, payload = reason, decline_payload
    estimate.save()
    emit(tenant_id, f"estimate.{status}", payload(estimate))
    return estimate


def decide_estimate_by_id(
    tenant_id: str, actor: Actor, estimate_id: int, status: str, reason: str | None = None
) -> Estimate:
    """POST /estimates/<id>/approve and /decline."""
    with write_transaction():
        estimate = retrieve_estimate(tenant_id, estimate_id, lock=True)
        return decide_estimate(tenant_id, actor, estimate, status, reason)


# in-app activity: `shop activity estimate.*` parses --data and calls the functions above


def find_estimate(tenant_id: str, fields: dict) -> Estimate:
    """The tenant's estimate named by id (and ticket_id when given), on a visible ticket, or 404."""
    estimate = retrieve_estimate(tenant_id, fields["id"], lock=True)
    if "ticket_id" in fields and fields["ticket_id"] != estimate.ticket_id:
        raise not_found("estimate", f"{fields['id']} on ticket {fields['ticket_id']}", "ticket_id")
    return estimate


def send_estimate(tenant_id: str, fields: dict) -> dict:
    """In-app activity: an estimate is sent (an existing one by id, or a new one for ticket_id)."""
    actor = actors.in_app("system")
    if "id" not in fields:
        if "ticket_id" not in fields:
            raise ApiError(
                400, "missing_field", "ticket_id: a new estimate needs its ticket.", param="ticket_id"
            )
        estimate = draft_estimate(tenant_id, actor, fields)
    else:
        estimate = find_estimate(tenant_id, fields)
        if set(fields) - {"id", "ticket_id"}:
            raise ApiError(
                400,
                "invalid_field",
                "number, currency and total are only for a new estimate (send without an id).",
                param=sorted(set(fields) - {"id", "ticket_id"})[0],
            )
    return ESTIMATE.dump(deliver_estimate(tenant_id, actor, estimate))


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


def approve_estimate(tenant_id: str, fields: dict) -> dict:
    """In-app activity: the customer (portal) or staff approves an estimate."""
    actor = actors.in_app(fields["approved_by"])
    estimate = decided_estimate(tenant_id, fields)
    return ESTIMATE.dump(decide_estimate(tenant_id, actor, estimate, "approved", evidence=fields))


def decline_estimate(tenant_id: str, fields: dict) -> dict:
    """In-app activity: the customer (portal) or staff declines an estimate, with an optional reason."""
    actor = actors.in_app(fields["declined_by"])
    estimate = decided_estimate(tenant_id, fields)
    return ESTIMATE.dump(
        decide_estimate(tenant_id, actor, estimate, "declined", fields["decline_reason"], fields)
    )

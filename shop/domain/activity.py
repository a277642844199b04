"""In-app activity: what staff and customers do outside the API, applied by `flask shop activity`.

Each kind maps to a domain function `fn(tenant_id: str, fields: dict) -> dict` that applies the
change in one transaction, emits the events it causes (with `source_kind: observed` where the spec
says), and returns the resulting record. A function that also takes `actor` (the records' functions,
which the API calls too) is given `actor.in_app(changed_by, change_source)` from the data (by
default `system` and `in_app`). This registry is the activity's edge: it parses `--data`
with the kind's schema, as a view's arguments are parsed, so the functions take plain values.
Functions are named as "module:function" and imported on use, so the registry imports no domain.
"""

import inspect
from importlib import import_module

import marshmallow as ma

import schemas.activity as act
from schemas.appointments import ActivityBookingSchema as BookingActivity
from schemas.notifications import NotificationInputSchema
from shop.db import write_transaction
from shop.domain import actor as actors
from shop.models import Tenant
from shop.platform.errors import ApiError, not_found
from shop.platform.validation import refuse_unstorable, validation_error

# kind -> (the "module:function" that applies it, the schema its --data is parsed with first, or
# None for the kinds that only name a record); handlers take the parsed fields, never raw input
ACTIVITIES = {
    "customer.created": ("shop.domain.records.customers:create_customer", act.CustomerCreated),
    "customer.updated": ("shop.domain.records.customers:update_customer", act.CustomerUpdated),
    "ticket.created": ("shop.domain.records.tickets:create_ticket", act.TicketCreated),
    "ticket.updated": ("shop.domain.records.tickets:update_ticket", act.TicketUpdated),
    "ticket.status_changed": ("shop.domain.records.tickets:change_ticket_status", act.TicketStatusChanged),
    "invoice.created": ("shop.domain.records.invoices:create_invoice", act.InvoiceCreated),
    "invoice.sent": ("shop.domain.records.invoices:send_invoice", act.InvoiceSent),
    "invoice.paid": ("shop.domain.records.invoices:mark_invoice_paid", act.InvoicePaid),
    "invoice.voided": ("shop.domain.records.invoices:void_invoice", act.InvoiceVoided),
    "invoice.refunded": ("shop.domain.records.invoices:refund_invoice", act.InvoiceRefunded),
    "estimate.sent": ("shop.domain.records.estimates:send_estimate", act.EstimateSent),
    "estimate.approved": ("shop.domain.records.estimates:approve_estimate", act.EstimateApproved),
    "estimate.declined": ("shop.domain.records.estimates:decline_estimate", act.EstimateDeclined),
    "payment.recorded": ("shop.domain.records.invoices:record_payment", act.PaymentRecorded),
    "payment.refunded": ("shop.domain.records.invoices:refund_payment", act.PaymentRefunded),
    "lead.created": ("shop.domain.records.leads:create_lead", act.LeadCreated),
    "lead.updated": ("shop.domain.records.leads:update_lead", act.LeadUpdated),
    "lead.converted": ("shop.domain.records.leads:convert_lead", act.LeadConverted),
    "message.received": ("shop.domain.messaging.conversations:receive_message", None),
    "appointment.created": ("shop.domain.appointments.appointments:book_from_activity", BookingActivity),
    "ticket.hidden": ("shop.domain.records.tickets:hide_ticket", None),
    "ticket.deleted": ("shop.domain.records.tickets:delete_ticket", None),
    "notification": ("shop.domain.notifications:notification_activity", NotificationInputSchema),
}


def run_activity(kind: str, tenant_id: str, data: dict) -> dict:
    """Apply one piece of in-app activity and return the resulting record."""
    target = ACTIVITIES.get(kind)
    if target is None:
        known = ", ".join(sorted(ACTIVITIES))
        raise ApiError(400, "invalid_field", f"Unknown activity {kind!r}; known: {known}.", param="kind")
    if not isinstance(data, dict):
        raise ApiError(400, "invalid_field", "--data must be a JSON object.", param="data")
    refuse_unstorable(data)  # text a backend cannot store: refused as a request body would be
    if Tenant.get_or_none(Tenant.id == tenant_id) is None:
        raise not_found("tenant", tenant_id, "tenant")
    handler, schema = target
    fields = data if schema is None else parse_data(schema, data)
    module, function = handler.split(":")
    apply = getattr(import_module(module), function)
    with write_transaction():
        if "actor" in inspect.signature(apply).parameters:
            return apply(tenant_id, fields, actor=activity_actor(fields))
        return apply(tenant_id, fields)


def activity_actor(fields: dict) -> actors.Actor:
    """Who the activity names (its changed_by and change_source, taken out of the fields)."""
    return actors.in_app(fields.pop("changed_by", "system"), fields.pop("change_source", "in_app"))


def parse_data(schema, data: dict) -> dict:
    """The activity's --data loaded by its schema; the first failure is a 400 naming the key."""
    try:
        return schema().load(data)
    except ma.ValidationError as error:
        raise validation_error({"json": error.messages}, schema()) from None


def observed(dto: dict) -> dict:
    """An event payload of in-app activity: the DTO marked `source_kind: observed`."""
    return {**dto, "source_kind": "observed"}


def taken(kind: str, record_id) -> ApiError:
    """The refusal for a create that names an id already in use (ids are unique across tenants)."""
    return ApiError(409, "conflict", f"A {kind} with id {record_id} already exists.", param="id")


def refuse_taken_id(model, fields: dict, kind: str) -> None:
    """409 conflict when a create names an id some record (of any tenant) already has."""
    if "id" in fields and model.get_or_none(model.id == fields["id"]) is not None:
        raise taken(kind, fields["id"])


def unprocessable(message: str, param: str | None = None) -> ApiError:
    """The refusal for a change the record's state does not allow."""
    return ApiError(422, "unprocessable", message, param=param)

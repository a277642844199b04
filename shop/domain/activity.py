"""In-app activity: what staff and customers do outside the API, applied by `flask shop activity`.

Each kind maps to a domain function `fn(tenant_id: str, data: dict) -> dict` that applies the change
in one transaction, emits the events it causes (with `source_kind: observed` where the spec says),
and returns the resulting record. Functions are named as "module:function" and imported on use,
so this registry imports nothing.
"""

from importlib import import_module

import marshmallow as ma

from shop.db import write_transaction
from shop.models import Tenant
from shop.platform.errors import ApiError
from shop.platform.validation import surrogate_path, validation_error

ACTIVITIES = {
    "customer.created": "shop.domain.records.customers:create_customer",
    "customer.updated": "shop.domain.records.customers:update_customer",
    "ticket.created": "shop.domain.records.tickets:create_ticket",
    "ticket.updated": "shop.domain.records.tickets:update_ticket",
    "ticket.status_changed": "shop.domain.records.tickets:change_ticket_status",
    "invoice.created": "shop.domain.records.invoices:create_invoice",
    "invoice.sent": "shop.domain.records.invoices:send_invoice",
    "invoice.paid": "shop.domain.records.invoices:mark_invoice_paid",
    "invoice.voided": "shop.domain.records.invoices:void_invoice",
    "invoice.refunded": "shop.domain.records.invoices:refund_invoice",
    "estimate.sent": "shop.domain.records.estimates:send_estimate",
    "estimate.approved": "shop.domain.records.estimates:approve_estimate",
    "estimate.declined": "shop.domain.records.estimates:decline_estimate",
    "payment.recorded": "shop.domain.records.invoices:record_payment",
    "payment.refunded": "shop.domain.records.invoices:refund_payment",
    "lead.created": "shop.domain.records.leads:create_lead",
    "lead.updated": "shop.domain.records.leads:update_lead",
    "lead.converted": "shop.domain.records.leads:convert_lead",
    "message.received": "shop.domain.messaging.conversations:receive_message",
    "appointment.created": "shop.domain.appointments.appointments:book_from_activity",
    "ticket.hidden": "shop.domain.records.tickets:hide_ticket",
    "ticket.deleted": "shop.domain.records.tickets:delete_ticket",
    "notification": "shop.domain.notifications:notification_activity",
}


def run_activity(kind: str, tenant_id: str, data: dict) -> dict:
    """Apply one piece of in-app activity and return the resulting record."""
    target = ACTIVITIES.get(kind)
    if target is None:
        known = ", ".join(sorted(ACTIVITIES))
        raise ApiError(400, "invalid_field", f"Unknown activity {kind!r}; known: {known}.", param="kind")
    if not isinstance(data, dict):
        raise ApiError(400, "invalid_field", "--data must be a JSON object.", param="data")
    bad = surrogate_path(data)
    if bad is not None:  # SQLite cannot store it: refuse as a request body would be
        raise ApiError(400, "invalid_field", f"{bad}: contains an unpaired surrogate (invalid text).",
                       param=bad)
    if Tenant.get_or_none(Tenant.id == tenant_id) is None:
        raise ApiError(404, "not_found", f"No tenant {tenant_id}.", param="tenant")
    module, function = target.split(":")
    with write_transaction():
        return getattr(import_module(module), function)(tenant_id, data)


def parse_data(schema, data: dict) -> dict:
    """The activity's --data loaded by its schema; the first failure is a 400 naming the key."""
    try:
        return schema().load(data)
    except ma.ValidationError as error:
        raise validation_error({"json": error.messages}, schema()) from None


def observed(dto: dict) -> dict:
    """An event payload of in-app activity: the DTO marked `source_kind: observed`."""
    return {**dto, "source_kind": "observed"}


def not_found(kind: str, record_id, param: str = "id") -> ApiError:
    """The refusal for a record that is missing, another tenant's, or hidden from the public surface."""
    return ApiError(404, "not_found", f"No {kind} {record_id}.", param=param)


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

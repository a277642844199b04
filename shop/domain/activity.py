"""In-app activity: what staff and customers do outside the API, applied by `flask shop activity`.

Each kind maps to a domain function `fn(tenant_id: str, data: dict) -> dict` that applies the change
in one transaction, emits the events it causes (with `source_kind: observed` where the spec says),
and returns the resulting record. Functions are named as "module:function" and imported on use,
so this registry imports nothing.
"""

from importlib import import_module

from shop.db import write_transaction
from shop.models import Tenant
from shop.platform.errors import ApiError

ACTIVITIES = {
    "message.received": "shop.domain.conversations:receive_message",
    "appointment.created": "shop.domain.appointments:book_from_activity",
    "ticket.hidden": "shop.domain.tickets:hide_ticket",
    "ticket.deleted": "shop.domain.tickets:delete_ticket",
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
    if Tenant.get_or_none(Tenant.id == tenant_id) is None:
        raise ApiError(404, "not_found", f"No tenant {tenant_id}.", param="tenant")
    module, function = target.split(":")
    with write_transaction():
        return getattr(import_module(module), function)(tenant_id, data)

"""Loading a fixture file: validated whole, written in one transaction, all or nothing."""

import marshmallow as ma

from schemas.fixtures import FixtureFile
from shop import clock
from shop.db import write_transaction
from shop.domain.appointments import reminders
from shop.domain.appointments.slots import booking_of, service_buffers
from shop.domain.fixture_rows import FixtureError, insert
from shop.domain.keys import create_key
from shop.domain.messaging.fixtures import load_conversation, load_suppression
from shop.domain.notifications import create_notification
from shop.domain.records.fixtures import load_estimate, load_invoice, load_lead, load_payment, load_refund
from shop.domain.teammates import hash_password
from shop.domain.webhooks.subscriptions import load_subscription
from shop.models import Appointment, Customer, Tenant, TenantSmsNumber, Ticket, User


def _first_error(messages, path: str = "") -> tuple[str, str]:
    """The path and text of the first error in a nested marshmallow error dict."""
    if isinstance(messages, dict):
        key, value = next(iter(messages.items()))
        if key == "_schema":  # a nested object of the wrong type: the field itself is at fault
            return _first_error(value, path)
        step = f"[{key}]" if isinstance(key, int) else (f".{key}" if path else str(key))
        return _first_error(value, path + step)
    if isinstance(messages, list) and messages and not isinstance(messages[0], str):
        return _first_error(messages[0], path)
    return path or "(file)", messages[0] if isinstance(messages, list) else str(messages)


def load_fixture(document) -> dict:
    """Validate and load a fixture document; returns a summary with every generated token."""
    try:
        data = FixtureFile().load(document)
    except ma.ValidationError as error:
        raise FixtureError(*_first_error(error.messages)) from None
    summary = {"tenants": [], "api_keys": []}
    with write_transaction():
        for index, tenant in enumerate(data["tenants"]):
            _load_tenant(f"tenants[{index}]", tenant, summary)
    return summary


def _load_tenant(path: str, data: dict, summary: dict) -> None:
    tenant_id = data["id"]
    fields = {k: data[k] for k in ("name", "timezone", "plan", "billing_status", "suspended")}
    insert(
        path,
        Tenant.create,
        id=tenant_id,
        current_period_end=data.get("current_period_end"),
        send_rate_per_minute=data.get("send_rate_per_minute"),
        booking=data.get("booking"),
        ticket_statuses=data.get("ticket_statuses"),
        inbound_email=(data.get("inbound_email") or "").lower() or None,
        help_text=data.get("help_text"),
        **fields,
    )
    for position, number in enumerate(data["sms_numbers"]):
        insert(
            f"{path}.sms_numbers[{position}]",
            TenantSmsNumber.create,
            number=number,
            tenant=tenant_id,
            position=position,
        )
    summary["tenants"].append(tenant_id)
    for section, loader in SECTION_LOADERS:
        for i, item in enumerate(data.get(section) or []):
            loader(f"{path}.{section}[{i}]", tenant_id, dict(item), summary)


def _load_user(path: str, tenant_id: str, user: dict, summary: dict) -> None:
    password = user.pop("password", None)
    user["password_hash"] = hash_password(password) if password else None
    insert(path, User.create, tenant=tenant_id, **user)


def _load_api_key(path: str, tenant_id: str, key: dict, summary: dict) -> None:
    created, token = insert(
        path,
        create_key,
        tenant_id,
        key["scopes"],
        mode=key["mode"],
        token=key.get("token"),
        key_id=key.get("id"),
        expires_at=key["expires_at"],
        revoked=key["revoked"],
    )
    summary["api_keys"].append(
        {
            "id": created.id,
            "tenant": tenant_id,
            "mode": created.mode,
            "token": token,
            "scopes": created.scopes,
        }
    )


def _load_customer(path: str, tenant_id: str, customer: dict, summary: dict) -> None:
    insert(path, Customer.create, tenant=tenant_id, **customer)


def _load_ticket(path: str, tenant_id: str, ticket: dict, summary: dict) -> None:
    customer_id = ticket.pop("customer_id", None)
    if (
        customer_id is not None
        and not Customer.for_tenant(tenant_id).where(Customer.id == customer_id).exists()
    ):
        raise FixtureError(f"{path}.customer_id", f"no customer {customer_id} in this tenant.")
    if "id" in ticket:
        ticket["id"] = int(ticket["id"])
    insert(path, Ticket.create, tenant=tenant_id, customer=customer_id, **ticket)


def _load_webhook_subscription(path: str, tenant_id: str, sub: dict, summary: dict) -> None:
    insert(path, load_subscription, tenant_id, sub, summary)


def _load_appointment(path: str, tenant_id: str, appointment: dict, summary: dict) -> None:
    if appointment.get("service_id") is not None:
        booking, _ = booking_of(tenant_id)
        service = booking.service(appointment["service_id"]) if booking else None
        if service is None:
            raise FixtureError(
                f"{path}.service_id",
                f"no service {appointment['service_id']!r} in the tenant's booking settings.",
            )
        appointment.update(service_buffers(service))
    created = insert(path, Appointment.create, tenant=tenant_id, **appointment)
    reminders.on_reopened(tenant_id, created)  # its reminders, as any booking's (no messages)


def _load_notification(path: str, tenant_id: str, item: dict, summary: dict) -> None:
    stored = {
        key: item.pop(key) for key in ("id", "read", "archived", "archived_at", "created_at") if key in item
    }
    if stored.get("archived"):
        # an archived row was dismissed, which reads it (as the archive endpoint does)
        stored.setdefault("read", True)
        stored["archived_at"] = stored.get("archived_at") or stored.get("created_at") or clock.now()
    elif stored.get("archived_at") is not None:
        raise FixtureError(f"{path}.archived_at", "only an archived notification has archived_at.")
    insert(path, create_notification, tenant_id, item, **stored)


# (fixture key, loader(path, tenant_id, item, summary)) in load order: a section may refer to
# records of the sections before it. A resource adds its section here and its schema in
# schemas/fixtures.py.
SECTION_LOADERS = (
    ("users", _load_user),
    ("api_keys", _load_api_key),
    ("customers", _load_customer),
    ("tickets", _load_ticket),
    ("conversations", load_conversation),
    ("suppressions", load_suppression),
    ("invoices", load_invoice),
    ("estimates", load_estimate),
    ("payments", load_payment),
    ("refunds", load_refund),
    ("leads", load_lead),
    ("webhook_subscriptions", _load_webhook_subscription),
    ("appointments", _load_appointment),
    ("notifications", _load_notification),
)

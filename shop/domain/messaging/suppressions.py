"""The suppression list: addresses the shop must not message, with why; and SMS consent with it."""

from peewee import IntegrityError

from schemas.messages import SuppressionSchema
from shop.db import write_transaction
from shop.domain.messaging.sending import EMAIL, PHONE, normalise_address
from shop.models import Customer, Suppression
from shop.platform.errors import ApiError, not_found
from shop.platform.pagination import paginate

OPT_OUTS = ("stop_keyword", "provider_opt_out")
ORDER = [(Suppression.created_at, True), (Suppression.id, True)]
SUPPRESSION = SuppressionSchema()


def suppress(tenant_id: str, channel: str, address: str, reason: str) -> tuple[Suppression, bool]:
    """Add the address (if absent; call inside a transaction); a number the customer opted out
    (STOP, the provider's opt-out) also loses its customers' SMS consent. Returns the row and
    whether it is new."""
    address = normalise_address(channel, address)
    if channel == "sms" and reason in OPT_OUTS:
        Customer.update(sms_consent=False).where(
            (Customer.tenant == tenant_id) & (Customer.phone == address)
        ).execute()
    found = _find(tenant_id, channel, address)
    if found is not None:
        return found, False
    try:
        with write_transaction():  # a savepoint: a concurrent add of the same address wins
            return Suppression.create(tenant=tenant_id, channel=channel, address=address, reason=reason), True
    except IntegrityError:
        return _find(tenant_id, channel, address), False


def lift(tenant_id: str, channel: str, address: str) -> None:
    """Remove the address from the list; a number texted START opts its customers back in to SMS."""
    address = normalise_address(channel, address)
    Suppression.delete().where(
        (Suppression.tenant == tenant_id)
        & (Suppression.channel == channel)
        & (Suppression.address == address)
    ).execute()
    if channel == "sms":
        Customer.update(sms_consent=True).where(
            (Customer.tenant == tenant_id) & (Customer.phone == address)
        ).execute()


def _find(tenant_id: str, channel: str, address: str) -> Suppression | None:
    return (
        Suppression.for_tenant(tenant_id)
        .where((Suppression.channel == channel) & (Suppression.address == address))
        .first()
    )


def list_suppressions(tenant_id: str, channel: str | None, limit: int, cursor: str | None) -> dict:
    """The tenant's suppressions, newest first, optionally of one channel."""
    query = Suppression.for_tenant(tenant_id)
    if channel is not None:
        query = query.where(Suppression.channel == channel)
    return paginate(query, ORDER, limit, cursor).envelope()


def add_suppression(tenant_id: str, channel: str, address: str) -> tuple[Suppression, bool]:
    """POST: suppress an address by hand (`manual`); the existing row when it is already listed."""
    address = check_address(channel, address)
    with write_transaction():
        return suppress(tenant_id, channel, address, "manual")


def delete_suppression(tenant_id: str, suppression_id: int) -> dict:
    """DELETE: the address may be messaged again (consent is not given back: the customer's own)."""
    with write_transaction():
        found = Suppression.for_tenant(tenant_id).where(Suppression.id == suppression_id).first()
        if found is None:
            raise not_found("message_suppression", suppression_id)
        found.delete_instance()
    return {"object": "message_suppression", "id": suppression_id, "deleted": True}


def check_address(channel: str, address: str) -> str:
    """The address in its compared form, or 400 when it is not a phone (sms) or email address."""
    normal = normalise_address(channel, address)
    if not (PHONE.match(normal) if channel == "sms" else EMAIL.match(normal)):
        raise ApiError(400, "invalid_field", f"address is not a valid {channel} address.", param="address")
    return normal

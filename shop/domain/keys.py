"""API keys: create (token shown once, stored hashed), revoke, list, describe."""

import re
import secrets
from datetime import datetime

from shop import clock
from shop.db import write_transaction
from shop.models import ApiKey, Tenant
from shop.platform.auth import hash_token
from shop.platform.errors import ApiError, not_found

MODES = ("live", "test")
# what a key id may look like (ours are key_<16 hex>; fixtures choose their own): anything else is no key
KEY_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# every scope the service knows: the spec's nine, the read scopes of event families, and the write
# scopes of the records' own API (docs/decisions.md, issue 24)
SCOPES = (
    "messages.read",
    "messages.write",
    "appointments.read",
    "appointments.write",
    "notifications.read",
    "notifications.write",
    "webhooks.read",
    "webhooks.write",
    "webhooks.manage",
    "customers.read",
    "tickets.read",
    "invoices.read",
    "invoices.write",
    "estimates.read",
    "estimates.write",
    "payments.read",
    "payments.write",
    "leads.read",
    "customers.write",
    "tickets.write",
    "leads.write",
)


def new_token(mode: str) -> str:
    """A fresh secret token: sk_<mode>_ and 32 random bytes."""
    return f"sk_{mode}_{secrets.token_urlsafe(32)}"


def create_key(
    tenant_id: str,
    scopes: list[str],
    mode: str = "test",
    token: str | None = None,
    key_id: str | None = None,
    expires_at: datetime | None = None,
    revoked: bool = False,
) -> tuple[ApiKey, str]:
    """Store a key hashed; returns the key and its token (the only time the token is seen)."""
    if mode not in MODES:
        raise ApiError(400, "invalid_field", f"mode must be one of {', '.join(MODES)}.", param="mode")
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown:
        raise ApiError(400, "invalid_field", f"Unknown scopes: {', '.join(unknown)}.", param="scopes")
    if Tenant.get_or_none(Tenant.id == tenant_id) is None:
        raise not_found("tenant", tenant_id, "tenant")
    token = token or new_token(mode)
    key = ApiKey.create(
        id=key_id or "key_" + secrets.token_hex(8),
        tenant=tenant_id,
        token_hash=hash_token(token),
        token_prefix=token[:12],
        mode=mode,
        scopes=sorted(set(scopes)),
        revoked=revoked,
        expires_at=expires_at,
    )
    return key, token


def tenant_key(tenant_id: str, key_id: str) -> ApiKey:
    """One key of this tenant: another tenant's key, or no such key, is the same 404."""
    key = None
    if isinstance(key_id, str) and KEY_ID.fullmatch(key_id):
        key = ApiKey.get_or_none((ApiKey.id == key_id) & (ApiKey.tenant == tenant_id))
    if key is None:
        raise not_found("API key", key_id, "key_id")
    return key


def revoke_key(key_id: str, tenant_id: str | None = None) -> ApiKey:
    """Mark a key revoked (within `tenant_id` when given: the owners' console page); it answers 401
    from the next request on, and the console sessions opened with it end at their next request."""
    with write_transaction():
        if tenant_id is not None:
            key = tenant_key(tenant_id, key_id)
        else:
            key = ApiKey.get_or_none(ApiKey.id == key_id)
            if key is None:
                raise not_found("API key", key_id, "key_id")
        if not key.revoked:
            key.revoked = True
            key.save()
    return key


def list_keys(tenant_id: str, with_prefix: bool = False) -> list[dict]:
    """Every key of a tenant, oldest first, as an operator sees it (never the token or its hash; the
    token's first 12 characters only for the owners' console page, which tells keys apart by them)."""
    if Tenant.get_or_none(Tenant.id == tenant_id) is None:
        raise not_found("tenant", tenant_id, "tenant")
    keys = ApiKey.select().where(ApiKey.tenant == tenant_id).order_by(ApiKey.created_at, ApiKey.id)
    return [describe_key(key, with_prefix) for key in keys]


def describe_key(key: ApiKey, with_prefix: bool = False) -> dict:
    """A key as `shop key list` prints it (and, with its prefix, as the console's Keys page shows it)."""
    shown = {
        "id": key.id,
        "mode": key.mode,
        "scopes": list(key.scopes),
        "revoked": key.revoked,
        "expires_at": clock.isoformat(key.expires_at),
        "created_at": clock.isoformat(key.created_at),
    }
    if with_prefix:
        shown["prefix"] = key.token_prefix
    return shown


def identity(key: ApiKey) -> dict:
    """What GET /api/v1/me says about a key."""
    return {
        "id": key.id,
        "tenant_id": key.tenant_id,
        "mode": key.mode,
        "livemode": key.mode == "live",
        "scopes": list(key.scopes),
        "expires_at": clock.isoformat(key.expires_at),
        "created_at": clock.isoformat(key.created_at),
    }

"""Webhook subscriptions: create, change, delete, rotate the signing secret, ping."""

import re
import secrets
from datetime import date, timedelta
from functools import lru_cache

from flask import current_app
from peewee import CharField

from shop import clock
from shop.db import locked, named_sql, on_postgres, run_sql, write_transaction
from shop.domain.events import catalog, outbox
from shop.domain.webhooks import destinations
from shop.models import Event, WebhookDelivery, WebhookSubscription
from shop.models.webhooks import API_VERSIONS, IN_FLIGHT
from shop.platform import secretbox
from shop.platform.errors import ApiError, not_found
from shop.platform.pagination import Page, decode_cursor, encode_cursor, paginate

VERSION_HEADER = "Service-Version"
SECRET_GRACE = timedelta(hours=24)
ORDER = [(WebhookSubscription.created_at, True), (WebhookSubscription.id, True)]
DATE_SHAPE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


# a subscription's row is locked before any row of its deliveries, in every transaction that writes
# both (docs/decisions.md, "Lock order"), and never FOR UPDATE: a worker inserting an attempt row
# holds its claimed delivery and takes a key-share lock on the subscription, which that would exclude
SUBSCRIPTION_LOCK = "NO KEY UPDATE"
LOCK_SUBSCRIPTION_SQL = named_sql(
    f"SELECT 1 FROM webhook_subscription WHERE id = :id FOR {SUBSCRIPTION_LOCK}"
)


def lock_subscription(subscription_id: str) -> None:
    """Inside a write transaction, before it touches a delivery: hold the subscription's row to the
    end, so two transactions that both write the subscription and its deliveries never hold one
    each while waiting for the other's (PostgreSQL; SQLite's write lock already holds everything)."""
    if on_postgres():
        run_sql(LOCK_SUBSCRIPTION_SQL, {"id": subscription_id})


def new_subscription_id() -> str:
    """whsub_ and an unguessable token."""
    return "whsub_" + secrets.token_hex(12)


def new_signing_secret() -> str:
    """whsec_ and 32 random bytes; the HMAC key is the whole string as UTF-8."""
    return "whsec_" + secrets.token_urlsafe(32)


def resolve_api_version(header: str | None) -> str:
    """The version a request asks for: the newest known version dated on or before its date."""
    if header is None:
        return API_VERSIONS[-1]
    try:
        asked = date.fromisoformat(header) if DATE_SHAPE.match(header) else None
    except ValueError:
        asked = None
    known = [version for version in API_VERSIONS if date.fromisoformat(version) <= (asked or date.min)]
    if asked is None or not known:
        raise ApiError(
            400,
            "invalid_field",
            f"{VERSION_HEADER} must be a date (YYYY-MM-DD) on or after {API_VERSIONS[0]}.",
            param=VERSION_HEADER,
        )
    return known[-1]


def check_url(url: str, config=None) -> str:
    """The URL if it passes the destination screen, else 400 invalid_field on url."""
    try:
        return destinations.screen_url_for_config(url, config if config is not None else current_app.config)
    except destinations.UrlRejected as error:
        raise ApiError(400, "invalid_field", str(error), param="url") from None


def check_event_scopes(key_scopes: list[str], events: list[str]) -> None:
    """403 insufficient_scope naming every read scope the key lacks for these event families."""
    missing = [scope for scope in catalog.required_scopes(events) if scope not in key_scopes]
    if missing:
        raise ApiError(
            403,
            "insufficient_scope",
            f"Subscribing to these events needs the {', '.join(missing)} scope"
            f"{'s' if len(missing) > 1 else ''}, which this API key lacks.",
            param="events",
            details={"required_scope": missing[0], "required_scopes": missing},
        )


def routes_events_anew(changed: dict) -> bool:
    """Whether a change points the subscription's events at a receiver anew: a new `url` or
    `enabled: true`. Either is the same act as choosing the events (docs/decisions.md, issue 23), so
    it passes the same scope gate; otherwise a key could re-point a `*` subscription at itself and
    redeliver or recover what it may not read."""
    return "url" in changed or changed.get("enabled") is True


def live_subscriptions(tenant_id: str):
    """The tenant's subscriptions that have not been deleted."""
    return WebhookSubscription.for_tenant(tenant_id).where(WebhookSubscription.deleted_at.is_null())


def get_subscription_or_404(tenant_id: str, subscription_id: str, lock: bool = False) -> WebhookSubscription:
    """A live subscription of this tenant, else 404 (another tenant's looks exactly like a missing one).

    `lock` (inside a write transaction): no other transaction changes it until this one ends.
    """
    sub = None
    # a NUL can be no id, and PostgreSQL refuses it in a text parameter (a 500, not a 404)
    if subscription_id.startswith("whsub_") and len(subscription_id) <= 40 and "\x00" not in subscription_id:
        query = live_subscriptions(tenant_id).where(WebhookSubscription.id == subscription_id)
        sub = (locked(query, SUBSCRIPTION_LOCK) if lock else query).first()
    if sub is None:
        raise not_found("webhook subscription", subscription_id)
    return sub


def create_subscription(
    tenant_id: str, key_scopes: list[str], body: dict, api_version: str
) -> WebhookSubscription:
    """A new subscription; the response is the only time its first signing secret is shown."""
    url = check_url(body["url"])
    check_event_scopes(key_scopes, body["events"])
    secret = new_signing_secret()
    now = clock.now()
    with write_transaction():
        sub = WebhookSubscription.create(
            id=new_subscription_id(),
            tenant=tenant_id,
            url=url,
            events=body["events"],
            description=body.get("description"),
            enabled=body["enabled"],
            api_version=api_version,
            secret_encrypted=secretbox.encrypt(secret),
            secret_generation=1,
            created_at=now,
            updated_at=now,
        )
    sub.signing_secret = secret  # shown in this response only (WebhookWithSecretSchema)
    return sub


def list_subscriptions(tenant_id: str, limit: int, cursor: str | None) -> dict:
    """One page of the tenant's subscriptions, newest first."""
    return paginate(live_subscriptions(tenant_id), ORDER, limit, cursor).envelope()


def update_subscription(
    tenant_id: str, key_scopes: list[str], subscription_id: str, changes: dict
) -> WebhookSubscription:
    """Change the fields given; new `events`, a new `url` and `enabled: true` pass the scope gate of
    the events the subscription will have; disabling dead-letters."""
    if "url" in changes:
        changes["url"] = check_url(changes["url"])
    with write_transaction():
        sub = get_subscription_or_404(tenant_id, subscription_id, lock=True)
        if "events" in changes:
            check_event_scopes(key_scopes, changes["events"])
        changed = {name: value for name, value in changes.items() if getattr(sub, name) != value}
        if not changed:
            return sub
        if routes_events_anew(changed):
            check_event_scopes(key_scopes, changed.get("events", sub.events))
        if changed.get("enabled") is False:
            dead_letter(sub)
        if changed.get("enabled") is True:
            sub.disabled_at = None  # re-enabled: the auto-disable notice no longer applies
        for name, value in changed.items():
            setattr(sub, name, value)
        sub.updated_at = clock.now()
        sub.save()
    return sub


def delete_subscription(tenant_id: str, subscription_id: str) -> dict:
    """Delete a subscription: gone from the API, its secrets erased, its queued deliveries dead."""
    with write_transaction():
        sub = get_subscription_or_404(tenant_id, subscription_id, lock=True)
        dead_letter(sub)
        now = clock.now()
        (
            WebhookSubscription.update(
                deleted_at=now,
                updated_at=now,
                enabled=False,
                secret_encrypted=None,
                previous_secret_encrypted=None,
                previous_secret_expires_at=None,
            )
            .where(WebhookSubscription.id == sub.id)
            .execute()
        )
    return {"object": "webhook_subscription", "id": sub.id, "deleted": True}


def dead_letter(sub: WebhookSubscription) -> int:
    """End every pending or retrying delivery of a subscription (it was disabled or deleted).

    On PostgreSQL their rows are locked in id order first, the order a batch claims them in: a
    bulk UPDATE takes them in whatever order it scans, and against a batch's claims that deadlocked.
    """
    now = clock.now()
    still_in_flight = (WebhookDelivery.subscription == sub.id) & WebhookDelivery.status.in_(IN_FLIGHT)
    in_id_order = (
        WebhookDelivery.select(WebhookDelivery.id).where(still_in_flight).order_by(WebhookDelivery.id)
    )
    return (
        WebhookDelivery.update(status="dead", next_attempt_at=None, updated_at=now)
        .where(WebhookDelivery.id.in_(locked(in_id_order, "NO KEY UPDATE")) & still_in_flight)
        .execute()
    )


def rotate_secret(tenant_id: str, subscription_id: str) -> WebhookSubscription:
    """A new current secret; the previous one stays valid for 24 hours, and until then no new rotation."""
    with write_transaction():
        sub = get_subscription_or_404(tenant_id, subscription_id, lock=True)
        now = clock.now()
        if sub.previous_secret_expires_at is not None and sub.previous_secret_expires_at > now:
            expires = clock.isoformat(sub.previous_secret_expires_at)
            raise ApiError(
                409,
                "rotation_in_progress",
                f"The previous signing secret is valid until {expires}; rotate again after that.",
                details={"previous_signing_secret_expires_at": expires},
            )
        secret = new_signing_secret()
        sub.previous_secret_encrypted = sub.secret_encrypted
        sub.previous_secret_expires_at = now + SECRET_GRACE
        sub.secret_encrypted = secretbox.encrypt(secret)
        sub.secret_generation += 1
        sub.secret_rotated_at = sub.updated_at = now
        sub.save()
    sub.signing_secret = secret  # shown in this response only (WebhookRotatedSchema)
    return sub


def signing_secrets(sub: WebhookSubscription, keys: tuple[str, ...] | None = None) -> list[str]:
    """The secrets a delivery is signed with now: the current one, then the previous during its grace
    (opened with the instance key ring `keys`, the configured one by default)."""
    keys = keys or secretbox.instance_keys()
    current = [_decrypted(sub.secret_encrypted, keys)] if sub.secret_encrypted else []
    expires = sub.previous_secret_expires_at
    if expires is not None and expires > clock.now() and sub.previous_secret_encrypted:
        current.append(_decrypted(sub.previous_secret_encrypted, keys))
    return current


# every attempt signs: decrypting the stored secret (Fernet: HMAC check and AES) cost as much as
# the rest of the signing; a rotated or re-encrypted secret has a new stored form, so the cache
# never goes stale
@lru_cache(maxsize=1024)
def _decrypted(stored: str, keys: tuple[str, ...]) -> str:
    return secretbox.decrypt(stored, keys)


def ping(tenant_id: str, subscription_id: str) -> WebhookDelivery:
    """A webhook.ping event and a pending delivery of it to this subscription only."""
    with write_transaction():
        sub = get_subscription_or_404(tenant_id, subscription_id, lock=True)
        if not sub.enabled:
            raise ApiError(
                422,
                "subscription_disabled",
                "This subscription is disabled; enable it before sending a ping.",
            )
        # not events.emit(): a ping goes to the subscription it names, never fanned out to others
        event = Event.create(
            id=outbox.new_event_id(),
            tenant=tenant_id,
            type="webhook.ping",
            api_version="v1",
            data={"subscription_id": sub.id},
            created=clock.now(),
        )
        delivery = outbox.queue_delivery(sub, event)
        outbox.enqueue([delivery.id])
    return delivery


def load_subscription(tenant_id: str, item: dict, summary: dict) -> WebhookSubscription:
    """A subscription from a fixture file (ids and timestamps kept; the URL screened as at create)."""
    from flask import has_app_context

    from shop.config import load_config

    check_url(item["url"], current_app.config if has_app_context() else load_config())
    secret = item.pop("signing_secret", None) or new_signing_secret()
    now = clock.now()
    fields = {"id": new_subscription_id(), "api_version": API_VERSIONS[-1], "created_at": now, **item}
    sub = WebhookSubscription.create(
        tenant=tenant_id,
        secret_encrypted=secretbox.encrypt(secret),
        updated_at=fields["created_at"],
        **fields,
    )
    summary.setdefault("webhook_subscriptions", []).append(
        {"id": sub.id, "tenant": tenant_id, "signing_secret": secret}
    )
    return sub


def list_event_types(limit: int, cursor: str | None) -> dict:
    """One page of the live event catalog, in the spec's order."""
    start = 0
    if cursor:
        (last,) = decode_cursor(cursor, [CharField()])
        if last not in catalog.EVENT_TYPES:
            raise ApiError(
                400,
                "invalid_cursor",
                "The cursor is malformed or belongs to another request.",
                param="cursor",
            )
        start = catalog.EVENT_TYPES.index(last) + 1
    entries = catalog.CATALOG[start : start + limit]
    has_more = start + limit < len(catalog.CATALOG)
    next_cursor = encode_cursor([entries[-1][0]]) if has_more else None
    return Page(list(entries), has_more, next_cursor).envelope()

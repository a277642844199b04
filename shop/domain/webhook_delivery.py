"""The delivery engine's rules: claim a due delivery, sign and send it, record the outcome."""

import json
import logging
from datetime import timedelta

from shop import clock
from shop.db import write_transaction
from shop.domain import destinations, webhook_transport
from shop.domain.signing import signature_header
from shop.domain.webhooks import dead_letter, signing_secrets
from shop.models import WebhookDelivery, WebhookSubscription
from shop.models.webhooks import IN_FLIGHT

log = logging.getLogger("shop.webhooks")
MAX_ATTEMPTS = 8
AUTO_DISABLE_WINDOW = timedelta(days=7)
AUTO_DISABLE_NOTICE = ("Disabled automatically: every delivery of the last 7 days failed permanently. "
                       "Fix the endpoint, then PATCH enabled true.")


def retry_delays(config) -> list[float]:
    """Seconds before attempts 1..8 (SHOP_WEBHOOK_RETRY_DELAYS)."""
    delays = [float(x) for x in str(config["WEBHOOK_RETRY_DELAYS"]).split(",") if x.strip()]
    return (delays + [delays[-1]] * MAX_ATTEMPTS)[:MAX_ATTEMPTS]


def hold_seconds(config) -> float:
    """How long a worker holds a delivery it attempts: the attempt's deadline and a margin."""
    return float(config["WEBHOOK_TIMEOUT"]) + 5


def claim(delivery_id: str, hold_seconds: float) -> WebhookDelivery | None:
    """Take a due delivery for one attempt (None if it is not due or another worker has it)."""
    now = clock.now()
    taken = (WebhookDelivery.update(claimed_until=now + timedelta(seconds=hold_seconds))
             .where((WebhookDelivery.id == delivery_id) & WebhookDelivery.status.in_(IN_FLIGHT)
                    & (WebhookDelivery.next_attempt_at <= now)
                    & (WebhookDelivery.claimed_until.is_null() | (WebhookDelivery.claimed_until < now)))
             .execute())
    return WebhookDelivery.get_by_id(delivery_id) if taken else None


def attempt(delivery_id: str, config) -> float | None:
    """One attempt of a delivery; returns the delay before the next one, or None when it ended."""
    timeout = float(config["WEBHOOK_TIMEOUT"])
    delivery = claim(delivery_id, hold_seconds(config))
    if delivery is None:
        return None
    sub = WebhookSubscription.get_by_id(delivery.subscription_id)
    if not sub.enabled or sub.deleted_at is not None:
        _finish(delivery, sub, "dead", error="subscription disabled or deleted")
        return None
    body = json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False).encode()
    now = int(clock.timestamp())
    headers = {"Content-Type": "application/json", "Service-Event-Id": delivery.event_id,
               "Service-Event-Type": delivery.event_type,
               "Service-Signature": signature_header(signing_secrets(sub, config["SECRET_KEY"]), now, body)}
    try:
        reply = webhook_transport.post(sub.url, body, headers, timeout, config.get("WEBHOOK_CA_BUNDLE"),
                                       destinations.parse_networks(config.get("WEBHOOK_TRUSTED_NETWORKS")))
    except webhook_transport.Blocked as blocked:
        _finish(delivery, sub, "dead", error=str(blocked))
        return None
    except webhook_transport.NetworkError as error:
        return _failed(delivery, sub, retry_delays(config), error=str(error))
    if 200 <= reply.status < 300:
        _finish(delivery, sub, "delivered", reply=reply)
        return None
    return _failed(delivery, sub, retry_delays(config), reply=reply)


def _record(delivery: WebhookDelivery, status: str, error: str | None, reply) -> None:
    now = clock.now()
    delivery.status, delivery.last_error, delivery.claimed_until = status, error, None
    delivery.attempts += 1
    delivery.last_attempt_at = delivery.updated_at = now
    delivery.last_status_code = reply.status if reply else None
    delivery.response_ms = reply.ms if reply else None
    delivery.response_excerpt = reply.excerpt if reply else None
    if status == "delivered":
        delivery.delivered_at, delivery.next_attempt_at = now, None
    delivery.save()


def _finish(delivery, sub, status: str, error: str | None = None, reply=None) -> None:
    """A delivered or dead delivery; a dead one may auto-disable its subscription."""
    with write_transaction():
        if status == "dead":
            delivery.next_attempt_at = None
        _record(delivery, status, error, reply)
        if status == "dead":
            _note_failure(sub, error or f"HTTP {reply.status}")
            maybe_auto_disable(sub)


def _failed(delivery, sub, delays: list[float], error: str | None = None, reply=None) -> float | None:
    """A failed attempt: retry per the table, or dead after the eighth."""
    if delivery.attempts + 1 >= MAX_ATTEMPTS:
        _finish(delivery, sub, "dead", error=error, reply=reply)
        return None
    delay = delays[delivery.attempts + 1]
    with write_transaction():
        delivery.next_attempt_at = clock.now() + timedelta(seconds=delay)
        _record(delivery, "retrying", error, reply)
        _note_failure(sub, error or f"HTTP {reply.status}")
    return delay


def _note_failure(sub: WebhookSubscription, reason: str) -> None:
    (WebhookSubscription.update(last_error=reason[:500])
     .where(WebhookSubscription.id == sub.id).execute())


def maybe_auto_disable(sub: WebhookSubscription) -> bool:
    """Disable a subscription whose deliveries have all failed permanently for 7 days."""
    now = clock.now()
    window_start = now - AUTO_DISABLE_WINDOW
    deliveries = WebhookDelivery.select().where(WebhookDelivery.subscription == sub.id)
    if deliveries.where(WebhookDelivery.delivered_at >= window_start).exists():
        return False
    # the failures must span the window: a dead delivery at least 7 days old, none delivered since
    failing_since = deliveries.where(WebhookDelivery.status.in_(("dead", "failed"))
                                     & (WebhookDelivery.created_at <= window_start)).exists()
    if not failing_since or not sub.enabled:
        return False
    changes = {"enabled": False, "disabled_at": now, "updated_at": now, "last_error": AUTO_DISABLE_NOTICE}
    WebhookSubscription.update(**changes).where(WebhookSubscription.id == sub.id).execute()
    dead_letter(sub)
    log.warning("webhook subscription %s disabled after 7 days of failed deliveries", sub.id)
    return True


def due_delivery_ids(limit: int = 1000) -> list[str]:
    """Pending or retrying deliveries whose time has come and that no worker holds (for the sweep)."""
    now = clock.now()
    rows = (WebhookDelivery.select(WebhookDelivery.id)
            .where(WebhookDelivery.status.in_(IN_FLIGHT) & (WebhookDelivery.next_attempt_at <= now)
                   & (WebhookDelivery.claimed_until.is_null() | (WebhookDelivery.claimed_until < now)))
            .order_by(WebhookDelivery.next_attempt_at).limit(limit))
    return [row.id for row in rows]

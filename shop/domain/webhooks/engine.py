"""The delivery engine's rules: claim a due delivery, sign and send it, record the outcome."""

import json
import logging
from datetime import timedelta

from shop import clock
from shop.db import locked, named_sql, run_sql, write_sql, write_transaction
from shop.domain.webhooks import destinations
from shop.domain.webhooks import transport as webhook_transport
from shop.domain.webhooks.signing import signature_header
from shop.domain.webhooks.subscriptions import dead_letter, signing_secrets
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


# the statements run for every attempt, as constant SQL the driver prepares once (building them
# with the query builder cost more than the HTTP request: docs/performance.md)
CLAIM_SQL = named_sql(
    "UPDATE webhook_delivery SET claimed_until = :until "
    "WHERE id = :id AND status IN ('pending', 'retrying') AND next_attempt_at <= :now "
    f"AND (claimed_until IS NULL OR claimed_until < :now) RETURNING {WebhookDelivery.columns()}"
)
SUBSCRIPTION_SQL = named_sql(
    f"SELECT {WebhookSubscription.columns()} FROM webhook_subscription WHERE id = :id"
)
RECORD_SQL = named_sql(
    "UPDATE webhook_delivery SET status = :status, last_error = :error, claimed_until = NULL, "
    "attempts = attempts + 1, last_attempt_at = :now, updated_at = :now, last_status_code = :code, "
    "response_ms = :ms, response_excerpt = :excerpt, next_attempt_at = :next, "
    "delivered_at = COALESCE(:delivered, delivered_at) WHERE id = :id"
)
NOTE_FAILURE_SQL = named_sql("UPDATE webhook_subscription SET last_error = :reason WHERE id = :id")
# a success clears the failure it follows; an auto-disable notice stays while the subscription is off
CLEAR_FAILURE_SQL = named_sql(
    "UPDATE webhook_subscription SET last_error = NULL WHERE id = :id AND enabled AND deleted_at IS NULL"
)


def claim(delivery_id: str, hold_seconds: float) -> WebhookDelivery | None:
    """Take a due delivery for one attempt (None if it is not due or another worker has it)."""
    now = clock.now()
    until = now + timedelta(seconds=hold_seconds)
    rows = write_sql(CLAIM_SQL, {"id": delivery_id, "now": now, "until": until})
    return WebhookDelivery.from_row(rows[0]) if rows else None


def attempt(delivery_id: str, config) -> float | None:
    """One attempt of a delivery; returns the delay before the next one, or None when it ended."""
    timeout = float(config["WEBHOOK_TIMEOUT"])
    delivery = claim(delivery_id, hold_seconds(config))
    if delivery is None:
        return None
    sub = WebhookSubscription.from_row(run_sql(SUBSCRIPTION_SQL, {"id": delivery.subscription_id})[0])
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


def _record(delivery: WebhookDelivery, status: str, error: str | None, reply, next_at=None) -> None:
    now = clock.now()
    write_sql(RECORD_SQL, {"id": delivery.id, "status": status, "error": error, "now": now,
                         "code": reply.status if reply else None, "ms": reply.ms if reply else None,
                         "excerpt": reply.excerpt if reply else None, "next": next_at,
                         "delivered": now if status == "delivered" else None})
    delivery.status, delivery.attempts = status, delivery.attempts + 1


def _finish(delivery, sub, status: str, error: str | None = None, reply=None) -> None:
    """A delivered or dead delivery; a dead one may auto-disable its subscription."""
    if status == "delivered":
        _delivered(delivery, sub, reply)
        return
    with write_transaction():
        _record(delivery, status, error, reply)
        _note_failure(sub, error or f"HTTP {reply.status}")
        maybe_auto_disable(sub)


def _delivered(delivery, sub, reply) -> None:
    """A success, which also clears the subscription's `last_error` of an earlier failure."""
    if sub.last_error is None:
        _record(delivery, "delivered", None, reply)  # one statement: no transaction needed
        return
    with write_transaction():
        _record(delivery, "delivered", None, reply)
        run_sql(CLEAR_FAILURE_SQL, {"id": sub.id})


def _failed(delivery, sub, delays: list[float], error: str | None = None, reply=None) -> float | None:
    """A failed attempt: retry per the table, or dead after the eighth."""
    if delivery.attempts + 1 >= MAX_ATTEMPTS:
        _finish(delivery, sub, "dead", error=error, reply=reply)
        return None
    delay = delays[delivery.attempts + 1]
    with write_transaction():
        _record(delivery, "retrying", error, reply, next_at=clock.now() + timedelta(seconds=delay))
        _note_failure(sub, error or f"HTTP {reply.status}")
    return delay


def _note_failure(sub: WebhookSubscription, reason: str) -> None:
    run_sql(NOTE_FAILURE_SQL, {"id": sub.id, "reason": reason[:500]})


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
    # re-read under a row lock: the owner may have re-enabled it, or another worker disabled it
    current = locked(WebhookSubscription.select(WebhookSubscription.enabled)
                     .where(WebhookSubscription.id == sub.id)).first()
    if not failing_since or current is None or not current.enabled:
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

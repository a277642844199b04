"""Operator notices in the tenant's inbox: a subscription disabled, the first dead delivery of a day."""

from shop import clock
from shop.db import db, named_sql
from shop.models import Notification, WebhookDelivery, WebhookSubscription

DISABLED_TYPE = "webhook_disabled"
DEAD_TYPE = "webhook_delivery_dead"
# claims the day's notice for a subscription: a row lock on PostgreSQL, the write lock on SQLite, so
# two workers killing deliveries at once notify once
CLAIM_DAY_SQL = named_sql(
    "UPDATE webhook_subscription SET dead_notice_on = :today "
    "WHERE id = :id AND (dead_notice_on IS NULL OR dead_notice_on < :today)"
)


def subscription_disabled(sub: WebhookSubscription, reason: str, notice: str, delivery_id=None) -> None:
    """A global inbox row saying a subscription was turned off, and why (in the caller's transaction)."""
    details = {"subscription_id": sub.id, "url": sub.url, "reason": reason}
    if delivery_id is not None:
        details["delivery_id"] = delivery_id
    Notification.create(
        tenant=sub.tenant_id,
        scope="global",
        type=DISABLED_TYPE,
        message=f"Webhook endpoint {sub.url[:200]} was disabled. {notice}",
        details=details,
        created_at=clock.now(),
    )


def delivery_dead(delivery: WebhookDelivery, reason: str) -> bool:
    """The first dead delivery of a subscription each UTC day becomes a global inbox row."""
    today = clock.now().date().isoformat()
    cursor = db.execute_sql(CLAIM_DAY_SQL, {"id": delivery.subscription_id, "today": today})
    if cursor.rowcount != 1:
        return False
    Notification.create(
        tenant=delivery.tenant_id,
        scope="global",
        type=DEAD_TYPE,
        message=f"A webhook delivery failed permanently ({reason[:200]}); later ones "
        "today are in the subscription's delivery log.",
        details={
            "subscription_id": delivery.subscription_id,
            "delivery_id": delivery.id,
            "event_id": delivery.event_id,
            "event_type": delivery.event_type,
        },
        created_at=clock.now(),
    )
    return True

"""Operator notices in the tenant's inbox: a subscription disabled, the first dead delivery of a day."""

from shop import clock
from shop.models import Notification, WebhookDelivery, WebhookSubscription

DISABLED_TYPE = "webhook_disabled"
DEAD_TYPE = "webhook_delivery_dead"


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
    today = clock.now().date()
    # claims the day's notice: a row lock on PostgreSQL, the write lock on SQLite, so two workers
    # killing deliveries at once notify once
    claimed = (
        WebhookSubscription.update(dead_notice_on=today)
        .where(
            (WebhookSubscription.id == delivery.subscription_id)
            & (WebhookSubscription.dead_notice_on.is_null() | (WebhookSubscription.dead_notice_on < today))
        )
        .execute()
    )
    if claimed != 1:
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

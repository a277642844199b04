"""Open problems a shop should look at: disabled subscriptions, dead deliveries, overdue appointments."""

from datetime import UTC
from zoneinfo import ZoneInfo

from shop import clock
from shop.domain.webhooks.subscriptions import live_subscriptions
from shop.models import Appointment, Tenant, WebhookDelivery, WebhookSubscription
from shop.models.appointments import TERMINAL_STATUSES

SHOWN = 10  # rows listed per kind; the count covers them all


def open_problems(tenant: Tenant, scopes: list[str]) -> dict:
    """Each kind of problem the key may read (others are absent): a count and the latest few."""
    problems = {}
    if "webhooks.read" in scopes:
        problems["disabled_subscriptions"] = _listed(_disabled(tenant.id))
        problems["dead_deliveries"] = _listed(_dead(tenant.id))
    if "appointments.read" in scopes:
        problems["overdue_appointments"] = _listed(_overdue(tenant))
    return problems


def _listed(query) -> dict:
    return {"count": query.count(), "items": list(query.limit(SHOWN))}


def _disabled(tenant_id: str):
    query = live_subscriptions(tenant_id).where(WebhookSubscription.enabled == False)  # noqa: E712
    return query.order_by(WebhookSubscription.disabled_at.desc(), WebhookSubscription.id)


def _dead(tenant_id: str):
    """Dead deliveries of live subscriptions, newest first (a deleted one's are nobody's to fix)."""
    live = live_subscriptions(tenant_id).select(WebhookSubscription.id)
    query = WebhookDelivery.for_tenant(tenant_id).where(
        (WebhookDelivery.status == "dead") & WebhookDelivery.subscription.in_(live)
    )
    return query.order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())


def _overdue(tenant: Tenant):
    """Appointments whose start (the shop's wall clock) has passed but that are still open."""
    local = clock.now().replace(tzinfo=UTC).astimezone(ZoneInfo(tenant.timezone))
    today, time = local.date(), local.strftime("%H:%M")
    started = (Appointment.scheduled_date < today) | (
        (Appointment.scheduled_date == today) & (Appointment.scheduled_time < time)
    )
    query = Appointment.for_tenant(tenant.id).where(started & Appointment.status.not_in(TERMINAL_STATUSES))
    return query.order_by(Appointment.scheduled_date, Appointment.scheduled_time, Appointment.id)

"""One blueprint per resource; MODULES is the tuple the API registers."""

from shop.api import (
    appointments,
    calendar_feeds,
    customers,
    discovery,
    estimates,
    identity,
    invoices,
    leads,
    messages,
    metrics,
    notifications,
    payments,
    reference,
    refunds,
    tickets,
    usage,
    webhooks,
)

MODULES = (
    discovery,
    reference,
    identity,
    customers,
    tickets,
    leads,
    appointments,
    calendar_feeds,
    messages,
    notifications,
    usage,
    webhooks,
    estimates,
    invoices,
    payments,
    refunds,
)


def register_blueprints(api) -> None:
    """Register every resource blueprint under /api/v1, and /metrics at the root."""
    for module in MODULES:
        api.register_blueprint(module.blp, url_prefix="/api/v1")
    metrics.register(api)

"""The Overview: the key's usage over the last 7 days as charts, and the shop's open problems."""

from flask import current_app, g

from schemas.appointments import AppointmentSchema
from schemas.webhooks import WebhookDeliverySchema, WebhookSubscriptionSchema
from shop.console import charts
from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import render
from shop.domain import problems, usage

DAYS = 7


@bp.route("/", methods=["GET"])
@page()
def overview():
    """Usage charts (requests, error rate, p95 per day: a key's own, so none for a teammate) and open
    problems the key or teammate may read."""
    key = g.get("api_key")
    series = usage.daily(key, DAYS, float(current_app.config["USAGE_TIME_BUDGET_MS"])) if key else None
    found = problems.open_problems(g.tenant, g.principal.scopes)
    return render(
        "console/overview.html",
        series=series,
        charts=charts.usage_charts(series) if series is not None else [],
        disabled=_dumped(found.get("disabled_subscriptions"), WebhookSubscriptionSchema()),
        dead=_dumped(found.get("dead_deliveries"), WebhookDeliverySchema()),
        overdue=_dumped(found.get("overdue_appointments"), AppointmentSchema()),
    )


def _dumped(found: dict | None, schema) -> dict | None:
    """A kind of problem as the API shows its records (None: the key may not read this kind)."""
    if found is None:
        return None
    return {"count": found["count"], "rows": schema.dump(found["items"], many=True)}

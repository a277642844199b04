"""Webhooks: subscriptions, a subscription's stats and deliveries, a delivery's attempts, and actions."""

from flask import g, redirect, request, url_for

from schemas.webhooks import (
    WebhookDeliveryAttemptSchema,
    WebhookDeliverySchema,
    WebhookRecoverSchema,
    WebhookRecoverySchema,
    WebhookSubscriptionSchema,
)
from shop.console import forms
from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import query_value, render
from shop.domain.webhooks import deliveries, recovery, stats, subscriptions
from shop.models.webhooks import DELIVERY_STATUSES, STATS_WINDOWS, TERMINAL

PAGE_SIZE = 50
SUBSCRIPTION = WebhookSubscriptionSchema()
DELIVERY = WebhookDeliverySchema()
ATTEMPT = WebhookDeliveryAttemptSchema()
DONE = {
    "pinged": "Ping queued: this is its delivery.",
    "redelivered": "Queued again: it is delivered shortly if the endpoint answers 2xx.",
}


@bp.route("/webhooks", methods=["GET"])
@page("webhooks.read")
def webhooks():
    """The tenant's subscriptions, newest first."""
    listed = subscriptions.list_subscriptions(g.tenant.id, PAGE_SIZE, query_value("cursor", 2000))
    return render("console/webhooks.html", listed=_dumped(listed, SUBSCRIPTION))


@bp.route("/webhooks/<sub_id>", methods=["GET"])
@page("webhooks.read")
def webhook(sub_id: str):
    """A subscription: stats over a window, delivery counts, deliveries by status, and its forms."""
    sub = subscriptions.get_subscription_or_404(g.tenant.id, sub_id)
    window = query_value("window", 3, allowed=STATS_WINDOWS) or "24h"
    status = query_value("status", 16, allowed=DELIVERY_STATUSES)
    listed = deliveries.list_deliveries(g.tenant.id, sub.id, PAGE_SIZE, query_value("cursor", 2000), status)
    found = recovery.get_recovery(g.tenant.id, sub.id, query_value("recovery", 40) or "")
    return render(
        "console/webhook.html",
        section="console.webhooks",
        sub=SUBSCRIPTION.dump(sub),
        stats=stats.endpoint_stats(g.tenant.id, sub.id, window),
        summary=deliveries.summary(g.tenant.id, sub.id),
        listed=_dumped(listed, DELIVERY),
        window=window,
        status=status,
        statuses=DELIVERY_STATUSES,
        terminal=TERMINAL,
        recovery=WebhookRecoverySchema().dump(found) if found else None,
        can_write="webhooks.write" in g.principal.scopes,
        can_manage="webhooks.manage" in g.principal.scopes,
    )


@bp.route("/webhooks/<sub_id>/deliveries/<delivery_id>", methods=["GET"])
@page("webhooks.read")
def delivery(sub_id: str, delivery_id: str):
    """A delivery and its attempt log, oldest first, with the redeliver button."""
    sub, found = deliveries.subscription_and_delivery(g.tenant.id, sub_id, delivery_id)
    attempts = deliveries.list_attempts(g.tenant.id, sub.id, found.id, 100, query_value("cursor", 2000))
    return render(
        "console/delivery.html",
        section="console.webhooks",
        sub=SUBSCRIPTION.dump(sub),
        delivery=DELIVERY.dump(found),
        attempts=_dumped(attempts, ATTEMPT),
        notice=DONE.get(query_value("done", 20) or ""),
        can_write="webhooks.write" in g.principal.scopes,
    )


@bp.route("/webhooks/<sub_id>/ping", methods=["POST"])
@page("webhooks.write")
def ping(sub_id: str):
    """Send a webhook.ping to this subscription and show its delivery."""
    sent = subscriptions.ping(g.tenant.id, sub_id)
    return _to_delivery(sent.subscription_id, sent.id, "pinged")


@bp.route("/webhooks/<sub_id>/deliveries/<delivery_id>/redeliver", methods=["POST"])
@page("webhooks.write")
def redeliver(sub_id: str, delivery_id: str):
    """Queue a finished delivery again."""
    queued = deliveries.redeliver(g.tenant.id, sub_id, delivery_id)
    return _to_delivery(queued.subscription_id, queued.id, "redelivered")


@bp.route("/webhooks/<sub_id>/rotate-secret", methods=["POST"])
@page("webhooks.manage")
def rotate_secret(sub_id: str):
    """Rotate the signing secret and show the new one, once (this response is never cached)."""
    sub = subscriptions.rotate_secret(g.tenant.id, sub_id)
    return render(
        "console/secret.html",
        section="console.webhooks",
        sub=SUBSCRIPTION.dump(sub),
        secret=sub.signing_secret,
        previous_expires_at=sub.previous_secret_expires_at,
    )


@bp.route("/webhooks/<sub_id>/recover", methods=["POST"])
@page("webhooks.write")
def recover(sub_id: str):
    """Count (dry run) or re-queue the finished deliveries of a window, then show the count."""
    body = {
        "since": forms.text("since", 40),
        "statuses": forms.choices("statuses", TERMINAL) or None,
        "dry_run": forms.one_of("mode", ("dry_run", "recover"), "dry_run") == "dry_run",
    }
    if until := forms.text("until", 40, required=False):
        body["until"] = until
    started = recovery.recover(g.tenant.id, sub_id, forms.load(WebhookRecoverSchema(), _present(body)))
    target = url_for("console.webhook", sub_id=started.subscription_id, recovery=started.id)
    return redirect(target + "#recover", 303)


def _present(body: dict) -> dict:
    return {name: value for name, value in body.items() if value is not None}


def _to_delivery(sub_id: str, delivery_id: str, done: str):
    return redirect(url_for("console.delivery", sub_id=sub_id, delivery_id=delivery_id, done=done), 303)


def _dumped(envelope: dict, schema) -> dict:
    """A list envelope with its records dumped as the API shows them, and the next page's link."""
    rows = schema.dump(envelope["data"], many=True)
    later = None
    if envelope["has_more"]:
        later = url_for(
            request.endpoint, **{**request.view_args, **_args(), "cursor": envelope["next_cursor"]}
        )
    return {"rows": rows, "next": later}


def _args() -> dict:
    return {name: value for name, value in request.args.items() if name != "cursor"}

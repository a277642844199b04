"""Webhook subscriptions: /api/v1/webhooks, secret rotation, pings and the event type catalog."""

from flask import g, request
from flask.views import MethodView

from schemas.common import NoBodySchema
from schemas.webhooks import (
    WebhookCreateSchema,
    WebhookDeletedSchema,
    WebhookDeliveryAttemptListSchema,
    WebhookDeliveryListSchema,
    WebhookDeliveryQueryArgsSchema,
    WebhookDeliverySchema,
    WebhookDeliverySummarySchema,
    WebhookEndpointStatsSchema,
    WebhookEventTypeListSchema,
    WebhookListSchema,
    WebhookQueryArgsSchema,
    WebhookRecoverSchema,
    WebhookRecoverySchema,
    WebhookRotatedSchema,
    WebhookStatsArgsSchema,
    WebhookSubscriptionSchema,
    WebhookUpdateSchema,
    WebhookWithSecretSchema,
)
from shop.domain.webhooks import deliveries as webhook_deliveries
from shop.domain.webhooks import recovery as webhook_recovery
from shop.domain.webhooks import stats as webhook_stats
from shop.domain.webhooks import subscriptions as webhooks
from shop.platform.smorest import Blueprint

blp = Blueprint("webhooks", __name__, description="Webhook subscriptions")

SERVICE_VERSION = {
    "name": webhooks.VERSION_HEADER,
    "in": "header",
    "required": False,
    "description": "The API version the subscription's payloads follow: a date; the newest version "
    f"dated on or before it applies (absent: the newest, {webhooks.API_VERSIONS[-1]}). "
    f"A date before {webhooks.API_VERSIONS[0]} or any other value is 400 invalid_field.",
    "schema": {
        "type": "string",
        "format": "date",
        "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        "maxLength": 10,
    },
}
DELIVERY_NOT_FOUND = "not_found: no such subscription (param id) or delivery of it (param delivery_id)"
FAMILY_SCOPES = (
    "insufficient_scope: the key lacks the webhook scope or the read scope of a subscribed event family"
)


# routed before /webhooks/<id> so the static path is never read as an id
@blp.route("/webhooks/event_types")
@blp.arguments(WebhookQueryArgsSchema, location="query")
@blp.response(200, WebhookEventTypeListSchema)
@blp.scope("webhooks.read")
@blp.doc(operationId="listWebhookEventTypes")
def event_types(args):
    """List the event types a subscription can receive (the live catalog)."""
    return webhooks.list_event_types(args["limit"], args["cursor"])


@blp.route("/webhooks")
class WebhookViews(MethodView):
    @blp.arguments(WebhookQueryArgsSchema, location="query")
    @blp.response(200, WebhookListSchema)
    @blp.scope("webhooks.read")
    @blp.doc(operationId="listWebhooks")
    def get(self, args):
        """List webhook subscriptions, newest first."""
        return webhooks.list_subscriptions(g.tenant.id, args["limit"], args["cursor"])

    @blp.arguments(WebhookCreateSchema)
    @blp.response(201, WebhookWithSecretSchema)
    @blp.refuses(403, FAMILY_SCOPES)
    @blp.scope("webhooks.write")
    @blp.sensitive
    @blp.doc(operationId="createWebhook", parameters=[SERVICE_VERSION])
    def post(self, body):
        """Create a subscription; its signing secret is shown in this response only."""
        version = webhooks.resolve_api_version(request.headers.get(webhooks.VERSION_HEADER))
        return webhooks.create_subscription(g.tenant.id, g.api_key.scopes, body, version)


@blp.route("/webhooks/<id>")
class WebhookByIdViews(MethodView):
    @blp.response(200, WebhookSubscriptionSchema)
    @blp.scope("webhooks.read")
    @blp.doc(operationId="getWebhook")
    def get(self, id):
        """Retrieve a subscription (never its secret)."""
        return webhooks.get_subscription_or_404(g.tenant.id, id)

    # no body (or {}) changes nothing and answers the subscription: the spec leaves every field optional
    @blp.arguments(WebhookUpdateSchema, required=False)
    @blp.response(200, WebhookSubscriptionSchema)
    @blp.refuses(403, FAMILY_SCOPES)
    @blp.scope("webhooks.write")
    @blp.doc(operationId="updateWebhook")
    def patch(self, changes, id):
        """Change url, events, description or enabled; omitted fields stay as they are."""
        return webhooks.update_subscription(g.tenant.id, g.api_key.scopes, id, changes)

    @blp.arguments(NoBodySchema, location="json", required=False)
    @blp.response(200, WebhookDeletedSchema)
    @blp.scope("webhooks.write")
    @blp.doc(operationId="deleteWebhook")
    def delete(self, _body, id):
        """Delete a subscription; its queued deliveries are dead-lettered."""
        return webhooks.delete_subscription(g.tenant.id, id)


@blp.route("/webhooks/<id>/rotate_secret", methods=["POST"])
@blp.arguments(NoBodySchema, location="json", required=False)
@blp.response(200, WebhookRotatedSchema)
@blp.refuses(
    409,
    "rotation_in_progress: the previous secret is still valid (24 h after the last "
    "rotation); or an idempotency conflict",
)
@blp.scope("webhooks.manage")
@blp.idempotency(required=True, min_length=8)
@blp.sensitive
@blp.doc(operationId="rotateWebhookSecret")
def rotate_secret(_body, id):
    """Rotate the signing secret; the previous one stays valid for 24 hours."""
    return webhooks.rotate_secret(g.tenant.id, id)


@blp.route("/webhooks/<id>/ping", methods=["POST"])
@blp.arguments(NoBodySchema, location="json", required=False)
@blp.response(202, WebhookDeliverySchema)
@blp.refuses(422, "subscription_disabled: enable it first")
@blp.scope("webhooks.write")
@blp.doc(operationId="pingWebhook")
def ping(_body, id):
    """Send a webhook.ping event to this subscription; the delivery starts pending."""
    return webhooks.ping(g.tenant.id, id)


@blp.route("/webhooks/<id>/deliveries")
@blp.arguments(WebhookDeliveryQueryArgsSchema, location="query")
@blp.response(200, WebhookDeliveryListSchema)
@blp.scope("webhooks.read")
@blp.doc(operationId="listWebhookDeliveries")
def deliveries(args, id):
    """List this subscription's deliveries, newest first."""
    return webhook_deliveries.list_deliveries(
        g.tenant.id, id, args["limit"], args["cursor"], args.get("status")
    )


# routed before .../deliveries/<delivery_id>/... paths; "summary" is never a delivery id
@blp.route("/webhooks/<id>/deliveries/summary")
@blp.response(200, WebhookDeliverySummarySchema)
@blp.scope("webhooks.read")
@blp.doc(operationId="getWebhookDeliverySummary")
def deliveries_summary(id):
    """Delivery counts per status, and the latest delivery and attempt."""
    return webhook_deliveries.summary(g.tenant.id, id)


@blp.route("/webhooks/<id>/deliveries/<delivery_id>/redeliver", methods=["POST"])
@blp.arguments(NoBodySchema, location="json", required=False)
@blp.response(202, WebhookDeliverySchema)
@blp.refuses(404, DELIVERY_NOT_FOUND)
@blp.refuses(422, "delivery_in_flight or subscription_disabled")
@blp.scope("webhooks.write")
@blp.doc(operationId="redeliverWebhookDelivery")
def redeliver(_body, id, delivery_id):
    """Queue a delivered, dead or failed delivery again with its original payload and event id."""
    return webhook_deliveries.redeliver(g.tenant.id, id, delivery_id)


@blp.route("/webhooks/<id>/deliveries/<delivery_id>")
@blp.response(200, WebhookDeliverySchema)
@blp.refuses(404, DELIVERY_NOT_FOUND)
@blp.scope("webhooks.read")
@blp.doc(operationId="getWebhookDelivery")
def delivery(id, delivery_id):
    """Retrieve one delivery of this subscription."""
    return webhook_deliveries.get_delivery(g.tenant.id, id, delivery_id)


@blp.route("/webhooks/<id>/deliveries/<delivery_id>/attempts")
@blp.arguments(WebhookQueryArgsSchema, location="query")
@blp.response(200, WebhookDeliveryAttemptListSchema)
@blp.refuses(404, DELIVERY_NOT_FOUND)
@blp.scope("webhooks.read")
@blp.doc(operationId="listWebhookDeliveryAttempts")
def delivery_attempts(args, id, delivery_id):
    """List a delivery's attempts, oldest first: request headers, response, duration, error."""
    return webhook_deliveries.list_attempts(g.tenant.id, id, delivery_id, args["limit"], args["cursor"])


@blp.route("/webhooks/<id>/recover", methods=["POST"])
@blp.arguments(WebhookRecoverSchema)
@blp.response(202, WebhookRecoverySchema)
@blp.refuses(
    409, "recovery_in_progress: a recovery of this subscription is still running; or an idempotency conflict"
)
@blp.refuses(422, "subscription_disabled: enable it first")
@blp.scope("webhooks.write")
@blp.doc(operationId="recoverWebhookDeliveries")
def recover(body, id):
    """Re-queue the finished deliveries created in [since, until) (dry_run: only count them)."""
    return webhook_recovery.recover(g.tenant.id, id, body)


@blp.route("/webhooks/<id>/stats")
@blp.arguments(WebhookStatsArgsSchema, location="query")
@blp.response(200, WebhookEndpointStatsSchema)
@blp.scope("webhooks.read")
@blp.doc(operationId="getWebhookEndpointStats")
def stats(args, id):
    """Attempts, success rate, p50/p95 response time and the latest outcomes over 24 h or 7 d."""
    return webhook_stats.endpoint_stats(g.tenant.id, id, args["window"])

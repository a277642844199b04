"""Our generic SMS gateway's webhooks: JSON signed like our own webhooks (Service-Signature)."""

import hmac
import json

from flask import current_app, request

from shop import clock
from shop.domain.actor import provider
from shop.domain.messaging import inbound, receipts
from shop.domain.messaging.conversations import MESSAGE
from shop.domain.webhooks.signing import sign_payload
from shop.inbound.blueprint import SMS_MAX_BYTES, bp, e164, enabled_by, limit_body, require_type, text_field
from shop.platform.errors import ApiError

TOLERANCE_SECONDS = 300
STATUSES = ("sent", "delivered", "undelivered", "failed")
ACTOR = provider("gateway")


def verified_json() -> dict:
    """The body as a JSON object once its Service-Signature (t=<unix>,v1=<hex HMAC-SHA256 of
    "t.<raw body>">, within TOLERANCE_SECONDS) checks out: 403 otherwise, 400 for bad JSON."""
    require_type("application/json")
    body = limit_body(SMS_MAX_BYTES)
    if not signature_ok(
        current_app.config["SMS_GATEWAY_SECRET"], request.headers.get("Service-Signature", ""), body
    ):
        raise ApiError(403, "forbidden", "Missing or invalid Service-Signature.")
    try:
        document = json.loads(body)
    except ValueError:
        raise ApiError(400, "invalid_json", "The request body is not valid JSON.") from None
    if not isinstance(document, dict):
        raise ApiError(400, "invalid_json", "The request body must be a JSON object.")
    return document


def signature_ok(secret: str, header: str, body: bytes) -> bool:
    """Whether one v1 of the header signs `t.body` with the secret, t within the tolerance."""
    parts = [item.split("=", 1) for item in header.split(",") if "=" in item]
    stamps = [value for name, value in parts if name.strip() == "t"]
    if len(stamps) != 1 or not stamps[0].strip().isdigit():
        return False
    timestamp = int(stamps[0])
    if abs(clock.timestamp() - timestamp) > TOLERANCE_SECONDS:
        return False
    expected = sign_payload(secret, timestamp, body)
    return any(hmac.compare_digest(expected, value.strip()) for name, value in parts if name.strip() == "v1")


def _provider_id(value) -> str:
    """The gateway's message id: a string, or a whole number as the gateway may answer it."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    return text_field(value, "id", limit=255)


def _media_urls(value) -> tuple:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > 10:
        raise ApiError(
            400, "invalid_field", "media_urls must be a list of at most 10 URLs.", param="media_urls"
        )
    return tuple(text_field(url, "media_urls", limit=2048) for url in value)


@bp.route("/sms/gateway", methods=["POST"])
@enabled_by("SMS_GATEWAY_SECRET")
def gateway_sms():
    """An inbound SMS from the gateway: {id, from, to, body, media_urls?}."""
    data = verified_json()
    message_id = _provider_id(data.get("id"))
    sender, recipient = e164(data.get("from"), "from"), e164(data.get("to"), "to")
    text = text_field(data.get("body"), "body", required=False) or ""
    media = _media_urls(data.get("media_urls"))
    tenant_id = inbound.tenant_for_number(recipient, "to")
    received = inbound.receive(
        inbound.InboundMessage(
            "sms", message_id, sender, recipient, text, media_urls=media, tenant_id=tenant_id
        ),
        ACTOR,
    )
    return {
        "object": "inbound_receipt",
        "message_id": received.message_id,
        "duplicate": received.duplicate,
        "reply": received.reply,
    }


@bp.route("/sms/gateway/status", methods=["POST"])
@enabled_by("SMS_GATEWAY_SECRET")
def gateway_status():
    """A delivery receipt from the gateway: {id, status, error_code?}."""
    data = verified_json()
    message_id = _provider_id(data.get("id"))
    status = data.get("status")
    if status not in STATUSES:
        raise ApiError(400, "invalid_field", f"status must be one of {', '.join(STATUSES)}.", param="status")
    error = text_field(data.get("error_code"), "error_code", required=False, limit=255)
    message = receipts.record_receipt(message_id, status, error, error == "opted_out", ACTOR, "id")
    return {
        "object": "delivery_receipt",
        "message_id": message.id,
        "delivery_status": MESSAGE.dump(message)["delivery_status"],
    }

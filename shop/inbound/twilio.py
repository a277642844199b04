"""Twilio's webhooks: form posts signed with X-Twilio-Signature (HMAC-SHA1 of the URL and the sorted
posted parameters, base64), answered with TwiML."""

import base64
import hashlib
import hmac
from xml.sax.saxutils import escape

from flask import Response, current_app, request

from shop.domain.actor import provider
from shop.domain.messaging import inbound, receipts
from shop.domain.messaging.conversations import MESSAGE
from shop.domain.messaging.providers import TWILIO_OPTED_OUT
from shop.inbound.blueprint import SMS_MAX_BYTES, bp, e164, enabled_by, limit_body, require_type, text_field
from shop.platform.errors import ApiError

ACTOR = provider("twilio")
FORM = "application/x-www-form-urlencoded"
MAX_MEDIA = 10
# Twilio's MessageStatus → ours; `read` is a delivered WhatsApp message, `canceled` one never sent
STATUSES = {
    "accepted": "queued",
    "scheduled": "queued",
    "queued": "queued",
    "sending": "queued",
    "sent": "sent",
    "delivered": "delivered",
    "read": "delivered",
    "undelivered": "undelivered",
    "failed": "failed",
    "canceled": "failed",
}


def compute_signature(token: str, url: str, params) -> str:
    """Twilio's signature: base64 HMAC-SHA1 of the URL followed by each parameter's name and value,
    names sorted (values of a repeated name sorted too), as twilio's RequestValidator computes it."""
    text = url
    for name in sorted(set(params)):
        for value in sorted(set(params.getlist(name))):
            text += name + value
    digest = hmac.new(token.encode(), text.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def public_url() -> str:
    """The URL Twilio posted to: SHOP_PUBLIC_URL + path (behind a proxy the service cannot see the
    public host), else the URL as this request reached us."""
    base = (current_app.config.get("PUBLIC_URL") or request.host_url).rstrip("/")
    query = request.query_string.decode("utf-8", "replace")
    return base + request.path + (f"?{query}" if query else "")


def verified_form():
    """The posted form once X-Twilio-Signature checks out: 403 otherwise."""
    require_type(FORM)
    limit_body(SMS_MAX_BYTES)
    try:
        form = request.form
    except Exception:
        raise ApiError(400, "invalid_form", "The form body could not be parsed.") from None
    given = request.headers.get("X-Twilio-Signature", "")
    expected = compute_signature(current_app.config["TWILIO_AUTH_TOKEN"], public_url(), form)
    if not given or not hmac.compare_digest(expected, given):
        raise ApiError(403, "forbidden", "Missing or invalid X-Twilio-Signature.")
    return form


def twiml(reply: str | None) -> Response:
    """<Response/>, with the keyword's answer as a <Message> when there is one."""
    inner = f"<Message>{escape(reply)}</Message>" if reply else ""
    body = f'<?xml version="1.0" encoding="UTF-8"?><Response>{inner}</Response>'
    return Response(body, status=200, mimetype="text/xml")


def _media_urls(form) -> tuple:
    count = form.get("NumMedia", "0")
    if not count.isdigit() or int(count) > MAX_MEDIA:
        raise ApiError(
            400, "invalid_field", f"NumMedia must be a number up to {MAX_MEDIA}.", param="NumMedia"
        )
    return tuple(text_field(form.get(f"MediaUrl{i}"), f"MediaUrl{i}", limit=2048) for i in range(int(count)))


@bp.route("/sms/twilio", methods=["POST"])
@enabled_by("TWILIO_AUTH_TOKEN")
def twilio_sms():
    """An inbound SMS or MMS from Twilio; a keyword's answer goes back as TwiML."""
    form = verified_form()
    sid = text_field(form.get("MessageSid"), "MessageSid", limit=64)
    sender, recipient = e164(form.get("From"), "From"), e164(form.get("To"), "To")
    text = text_field(form.get("Body"), "Body", required=False) or ""
    media = _media_urls(form)
    tenant_id = inbound.tenant_for_number(recipient, "To")
    message = inbound.InboundMessage(
        "sms", sid, sender, recipient, text, media_urls=media, tenant_id=tenant_id
    )
    received = inbound.receive(message, ACTOR, reply_inline=True)
    return twiml(None if received.duplicate else received.reply)


@bp.route("/sms/twilio/status", methods=["POST"])
@enabled_by("TWILIO_AUTH_TOKEN")
def twilio_status():
    """A status callback: MessageSid, MessageStatus, ErrorCode."""
    form = verified_form()
    sid = text_field(form.get("MessageSid"), "MessageSid", limit=64)
    status = STATUSES.get(form.get("MessageStatus", ""))
    if status is None:
        raise ApiError(400, "invalid_field", "MessageStatus is not one Twilio sends.", param="MessageStatus")
    error = text_field(form.get("ErrorCode"), "ErrorCode", required=False, limit=32)
    message = receipts.record_receipt(sid, status, error, error == TWILIO_OPTED_OUT, ACTOR, "MessageSid")
    return {
        "object": "delivery_receipt",
        "message_id": message.id,
        "delivery_status": MESSAGE.dump(message)["delivery_status"],
    }

"""Signed reply and bounce addresses at SHOP_INBOUND_EMAIL_DOMAIN: `reply+<token>@` names a
conversation (replies thread back), `bounces+<token>@` one message (VERP: its bounce names it)."""

import hashlib
import hmac


def sign(secret: str, kind: str, record_id: int) -> str:
    """`<kind><id>-<16 hex>`: a token naming a conversation (c) or a message (m), signed."""
    digest = hmac.new(secret.encode(), f"{kind}{record_id}".encode(), hashlib.sha256).hexdigest()[:16]
    return f"{kind}{record_id}-{digest}"


def reply_address(config, conversation_id: int) -> str | None:
    """`reply+<token>@SHOP_INBOUND_EMAIL_DOMAIN` for a conversation, when the domain is set."""
    domain = config.get("INBOUND_EMAIL_DOMAIN")
    return f"reply+{sign(config['SECRET_KEY'], 'c', conversation_id)}@{domain}" if domain else None


def bounce_address(config, message_id: int) -> str | None:
    """The VERP envelope sender `bounces+<token>@SHOP_INBOUND_EMAIL_DOMAIN` naming one message."""
    domain = config.get("INBOUND_EMAIL_DOMAIN")
    return f"bounces+{sign(config['SECRET_KEY'], 'm', message_id)}@{domain}" if domain else None

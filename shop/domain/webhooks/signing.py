"""Webhook signatures: HMAC-SHA256 of `<t>.<raw body>`, one v1 per currently valid secret."""

import hashlib
import hmac


def sign_payload(secret: str, timestamp: int, body: bytes) -> str:
    """The lowercase hex HMAC-SHA256 of `<timestamp>.<body>` under `secret`."""
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature_header(secrets: list[str], timestamp: int, body: bytes) -> str:
    """The Service-Signature value: `t=<unix>,v1=<hex>[,v1=<hex>]`."""
    return ",".join([f"t={timestamp}"] + [f"v1={sign_payload(s, timestamp, body)}" for s in secrets])

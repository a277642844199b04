"""A webhook receiver written from the spec alone: HTTPS with a trustme certificate, and an
independent implementation of the six signature-verification steps."""

import hashlib
import hmac
import json
import ssl
import time

import trustme

from tests.helpers.receivers import HttpReceiver

TOLERANCE_SECONDS = 300


def verify(header: str, raw_body: bytes, secrets: list[str], now: float | None = None) -> list[str]:
    """The secrets whose v1 signature matches (steps 1-5 of the spec); raises ValueError otherwise."""
    items = [part.split("=", 1) for part in header.split(",")]  # 1. read t and every v1
    timestamps = [value for key, value in items if key == "t"]
    signatures = [value for key, value in items if key == "v1"]
    if len(timestamps) != 1 or not signatures:
        raise ValueError("malformed Service-Signature")
    signed = timestamps[0].encode() + b"." + raw_body  # 2. literal timestamp, a dot, the raw bytes
    matched = []
    for secret in secrets:
        expected = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()  # 3. HMAC-SHA256 hex
        for candidate in signatures:  # 4. length-checked constant-time comparison
            if len(candidate) == len(expected) == 64 and hmac.compare_digest(candidate, expected):
                matched.append(secret)
    if not matched:
        raise ValueError("no signature matches a valid secret")
    if abs((now or time.time()) - int(timestamps[0])) > TOLERANCE_SECONDS:  # 5. timestamp tolerance
        raise ValueError("timestamp outside the tolerance")
    return matched


class WebhookReceiver(HttpReceiver):
    """An HTTPS receiver on 127.0.0.1 with its own CA; `ca_path` is what SHOP_WEBHOOK_CA_BUNDLE names."""

    def __init__(
        self, tmp_path, script=None, default=(200, {"ok": True}), delay=0.0, keep_alive=False, names=()
    ):
        self.ca = trustme.CA()
        server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert("127.0.0.1", "localhost", *names).configure_cert(server_context)
        self.ca_path = str(tmp_path / "webhook-ca.pem")
        self.ca.cert_pem.write_to_path(self.ca_path)
        super().__init__(
            script=script, default=default, ssl_context=server_context, delay=delay, keep_alive=keep_alive
        )

    def hook_url(self, host: str = "127.0.0.1") -> str:
        return f"https://{host}:{self.port}/hooks/repair-shop"

    def events(self) -> list[dict]:
        """Every request received, parsed: body, event id, type and signature header."""
        with self.lock:
            requests = list(self.requests)
        return [{"raw": r["body"], "body": json.loads(r["body"]), "headers": r["headers"]} for r in requests]

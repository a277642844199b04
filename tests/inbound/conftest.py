"""The inbound tests' shop (two tenants, each with its numbers) and signed posts of both providers.

Signatures are computed here by the providers' published algorithms, not by the code under test:
Twilio's (HMAC-SHA1 of the URL and the sorted parameters, base64) and our webhooks' Service-Signature.
"""

import base64
import hashlib
import hmac
import json
import time
from urllib.parse import urlencode

import pytest

from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.messages import ANN_PHONE, shop_fixture

SHOP_NUMBER = "+15555550000"
GLOBEX_NUMBER = "+15555559000"
TWILIO_TOKEN = "twilio-auth-token-for-tests"
GATEWAY_SECRET = "gateway-secret-for-tests"
PUBLIC_URL = "https://shop.example.com"
STRANGER = "+15555550177"


@pytest.fixture
def shop(load, app, monkeypatch):
    """acme (Ann, the demo's customers) on SHOP_NUMBER, globex on its own; both providers on."""
    load(
        shop_fixture(sms_numbers=[SHOP_NUMBER, "+15555550001"], help_text="Acme: call 555-0000."),
        tenant_fixture("globex", sms_numbers=[GLOBEX_NUMBER]),
    )
    monkeypatch.setitem(app.config, "TWILIO_AUTH_TOKEN", TWILIO_TOKEN)
    monkeypatch.setitem(app.config, "SMS_GATEWAY_SECRET", GATEWAY_SECRET)
    monkeypatch.setitem(app.config, "PUBLIC_URL", PUBLIC_URL)
    return auth_headers("sk_test_acme_token_0001")


def twilio_signature(url: str, params: dict, token: str = TWILIO_TOKEN) -> str:
    """Twilio's published algorithm: the URL, then each name and value, names sorted."""
    text = url + "".join(name + str(params[name]) for name in sorted(params))
    return base64.b64encode(hmac.new(token.encode(), text.encode(), hashlib.sha1).digest()).decode()


def post_twilio(client, path: str, params: dict, signature: str | None = "compute", url: str | None = None):
    """A form post as Twilio sends it, signed over PUBLIC_URL + path unless told otherwise."""
    headers = {}
    if signature == "compute":
        signature = twilio_signature(url or PUBLIC_URL + path, params)
    if signature is not None:
        headers["X-Twilio-Signature"] = signature
    return client.post(
        path,
        data=urlencode(params),
        headers=headers,
        content_type="application/x-www-form-urlencoded",
    )


def twilio_sms(sid="SM0001", sender=ANN_PHONE, body="Is it ready?", to=SHOP_NUMBER, **extra) -> dict:
    return {"MessageSid": sid, "From": sender, "To": to, "Body": body, "NumMedia": "0", **extra}


def gateway_signature(body: bytes, timestamp: int | None = None, secret: str = GATEWAY_SECRET) -> str:
    stamp = int(time.time()) if timestamp is None else timestamp
    digest = hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={stamp},v1={digest}"


def post_gateway(client, path: str, payload, signature: str | None = "compute", raw: bytes | None = None):
    """A JSON post as the gateway sends it, with its Service-Signature."""
    body = raw if raw is not None else json.dumps(payload).encode()
    headers = {}
    if signature == "compute":
        signature = gateway_signature(body)
    if signature is not None:
        headers["Service-Signature"] = signature
    return client.post(path, data=body, headers=headers, content_type="application/json")


def gateway_sms(id="gw-in-1", sender=ANN_PHONE, body="Is it ready?", to=SHOP_NUMBER, **extra) -> dict:
    return {"id": id, "from": sender, "to": to, "body": body, **extra}

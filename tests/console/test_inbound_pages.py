"""The console around two-way messaging: a thread's inbound messages, receipts and mark read; the
inbox's message notifications link to their thread."""

import pytest

from shop.models import Message
from tests.helpers.console import page_text, sign_in
from tests.helpers.messages import ANN_PHONE, shop_fixture
from tests.inbound.conftest import SHOP_NUMBER, gateway_sms, post_gateway

TOKEN = "sk_test_acme_token_0001"


@pytest.fixture
def shop(load, app, monkeypatch):
    load(shop_fixture(sms_numbers=[SHOP_NUMBER]))
    monkeypatch.setitem(app.config, "SMS_GATEWAY_SECRET", "gateway-secret-for-tests")


def test_an_inbound_sms_shows_in_its_thread_and_mark_read_clears_it(client, shop):
    media = ["https://m.example/1.jpg", "javascript:alert(1)"]
    post_gateway(client, "/inbound/sms/gateway", gateway_sms(body="Is it ready?", media_urls=media))
    message = Message.get()
    csrf = sign_in(client, TOKEN)
    html = page_text(client.get(f"/console/conversations/{message.conversation_id}"))
    assert "Is it ready?" in html and f"from {ANN_PHONE}" in html and '"unread-count">1 unread<' in html
    assert 'href="https://m.example/1.jpg"' in html and 'href="javascript' not in html
    response = client.post(
        f"/console/conversations/{message.conversation_id}/read", data={"csrf_token": csrf}
    )
    assert response.status_code == 303
    assert Message.get_by_id(message.id).read is True
    html = page_text(client.get(f"/console/conversations/{message.conversation_id}"))
    assert '"unread-count">0 unread<' in html and 'id="mark-read"' not in html


def test_mark_read_needs_the_csrf_token(client, shop):
    post_gateway(client, "/inbound/sms/gateway", gateway_sms())
    message = Message.get()
    sign_in(client, TOKEN)
    response = client.post(f"/console/conversations/{message.conversation_id}/read", data={})
    assert response.status_code in (400, 403) and Message.get_by_id(message.id).read is False


def test_a_failed_receipt_shows_its_error_and_the_inbox_links_the_thread(client, shop):
    post_gateway(client, "/inbound/sms/gateway", gateway_sms())
    conversation_id = Message.get().conversation_id
    Message.create(
        tenant="acme",
        conversation=conversation_id,
        channel="sms",
        direction="outbound",
        body="Ready",
        recipient=ANN_PHONE,
        external_uuid="gw-9",
        delivery_status="sent",
        read=True,
    )
    post_gateway(
        client, "/inbound/sms/gateway/status", {"id": "gw-9", "status": "undelivered", "error_code": "30005"}
    )
    sign_in(client, TOKEN)
    html = page_text(client.get(f"/console/conversations/{conversation_id}"))
    assert "undelivered" in html and "30005" in html
    inbox = page_text(client.get("/console/inbox"))
    assert "message_received" in inbox and "message_failed" in inbox
    assert f'href="/console/conversations/{conversation_id}#message-' in inbox

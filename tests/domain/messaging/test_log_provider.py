"""The log provider (no provider configured) says a message would go, without personal data."""

import logging

from shop.domain.messaging import delivery
from shop.models import Message
from tests.helpers import auth_headers
from tests.helpers.messages import ANN_PHONE, send, shop_fixture


def test_the_log_provider_logs_the_message_id_never_the_recipient_or_the_text(app, client, load, caplog):
    load(shop_fixture())
    body = {"ticket_id": "1001", "channel": "sms", "to": ANN_PHONE, "content": "Your door code is 4321"}
    accepted = send(client, auth_headers("sk_test_acme_token_0001"), **body)
    assert accepted.status_code == 202, accepted.get_data(as_text=True)
    message = Message.get(Message.direction == "outbound")
    with caplog.at_level(logging.INFO, logger="shop.providers"):
        delivery.attempt(message.id, app.config)
    said = [r.getMessage() for r in caplog.records if r.name == "shop.providers"]
    assert said == [f"log provider: sms message {message.id} (22 chars)"]
    assert ANN_PHONE not in caplog.text and "4321" not in caplog.text
    assert Message.get_by_id(message.id).delivery_status == "logged"

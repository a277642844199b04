"""The console's Conversations through the test client: threads, a thread's messages with read and
delivery state, and send on a ticket through the API's pipeline (validation, suppression, consent, rate)."""

import pytest

from shop.domain import actor
from shop.domain.messaging import delivery
from shop.domain.messaging.receipts import record_receipt
from shop.models import Message, Tenant
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.console import page_text, sign_in
from tests.helpers.messages import ANN_PHONE, shop_fixture

TOKEN = "sk_test_acme_token_0001"
THREAD = [
    {
        "id": 10,
        "customer_id": 1,
        "messages": [
            {"id": 100, "channel": "sms", "direction": "inbound", "body": "Is it ready?", "read": False},
            {"id": 101, "channel": "sms", "direction": "inbound", "body": "Hello?", "read": True},
        ],
    }
]


@pytest.fixture
def shop(load):
    """acme's messaging shop (tests/helpers/messages.py) with Ann's thread: one unread, one read."""
    load(shop_fixture(conversations=THREAD))


def sms(csrf: str, **fields) -> dict:
    return {
        "csrf_token": csrf,
        "channel": "sms",
        "ticket_id": "1001",
        "to": ANN_PHONE,
        "content": "Ready!",
        **fields,
    }


def outbound() -> list[tuple]:
    return list(Message.select(Message.id, Message.body).where(Message.direction == "outbound").tuples())


def test_the_threads_list_shows_customers_and_unread_counts(client, shop):
    sign_in(client, TOKEN)
    html = page_text(client.get("/console/conversations"))
    assert "Ann Lee" in html and 'href="/console/conversations/10"' in html
    row = html.split('id="conversation-10"')[1].split("</tr>")[0]
    assert '"unread-count">1<' in row


def test_a_thread_shows_its_messages_with_their_read_state(client, shop):
    sign_in(client, TOKEN)
    html = page_text(client.get("/console/conversations/10"))
    first = html.split('id="message-100"')[1].split("</li>")[0]
    second = html.split('id="message-101"')[1].split("</li>")[0]
    assert "Is it ready?" in first and ">unread<" in first
    assert "Hello?" in second and ">read<" in second
    assert "1 unread" in html
    assert 'value="1001"' in html and f'value="{ANN_PHONE}"' in html  # the form offers Ann's ticket and phone
    assert "1003" not in html  # a hidden ticket is not offered


def test_sending_an_sms_queues_it_and_shows_its_status_in_the_thread(client, shop):
    csrf = sign_in(client, TOKEN)
    response = client.post("/console/conversations/send", data=sms(csrf))
    assert response.status_code == 303
    message = Message.get(Message.direction == "outbound")
    assert response.headers["Location"] == f"/console/conversations/10?done=sent#message-{message.id}"
    assert message.conversation_id == 10 and message.sent_from_ticket_id == "1001"
    assert message.delivery_status == "queued"
    html = page_text(client.get(response.headers["Location"]))
    item = html.split(f'id="message-{message.id}"')[1].split("</li>")[0]
    assert "Ready!" in item and "status-queued" in item and f"to {ANN_PHONE}" in item
    assert "data-refresh" in html  # the page looks again until it is sent


def test_sending_an_email_on_a_ticket_without_a_thread_starts_one(client, shop):
    csrf = sign_in(client, TOKEN)
    form = {
        "csrf_token": csrf,
        "channel": "email",
        "ticket_id": "1002",
        "content": "Hi Bo",
        "subject": "Your phone",
    }
    response = client.post("/console/conversations/send", data=form)
    assert response.status_code == 303
    message = Message.get(Message.direction == "outbound")
    assert message.recipient == "bo@example.com" and message.subject == "Your phone"
    assert f"/console/conversations/{message.conversation_id}?done=sent" in response.headers["Location"]


@pytest.mark.parametrize(
    "fields, status, says",
    [
        pytest.param(
            {"ticket_id": "1005", "channel": "email", "to": ""}, 422, "suppression list", id="suppressed"
        ),
        pytest.param({"ticket_id": "1002", "to": "+15555550101"}, 422, "not consented", id="no sms consent"),
        pytest.param({"to": "not-a-phone"}, 422, "Invalid contact", id="an undeliverable number"),
        pytest.param({"ticket_id": "1003"}, 404, "No ticket", id="a hidden ticket"),
        pytest.param({"ticket_id": "9999"}, 404, "No ticket", id="an unknown ticket"),
        pytest.param({"content": "x" * 1601}, 400, "longer than 1600", id="an sms over 1600 characters"),
        pytest.param({"subject": "Hi"}, 400, "email messages only", id="a subject on an sms"),
        pytest.param({"channel": "fax"}, 400, "channel", id="an unknown channel"),
        pytest.param({"content": ""}, 400, "content", id="no text"),
    ],
)
def test_a_refused_send_shows_the_api_s_message_and_sends_nothing(client, shop, fields, status, says):
    csrf = sign_in(client, TOKEN)
    response = client.post("/console/conversations/send", data=sms(csrf, **fields))
    assert response.status_code == status and says in page_text(response)
    assert response.mimetype == "text/html" and outbound() == []


def test_the_shop_s_send_rate_is_the_api_s(client, shop):
    Tenant.update(send_rate_per_minute=1).where(Tenant.id == "acme").execute()
    csrf = sign_in(client, TOKEN)
    assert client.post("/console/conversations/send", data=sms(csrf)).status_code == 303
    response = client.post("/console/conversations/send", data=sms(csrf, content="Again"))
    assert response.status_code == 429 and "1 messages a minute" in page_text(response)
    assert response.headers["Retry-After"] and len(outbound()) == 1


def test_a_read_only_key_sees_threads_but_no_send_form(client, load):
    load(shop_fixture(conversations=THREAD, scopes=["messages.read"]))
    csrf = sign_in(client, TOKEN)
    assert "/console/conversations/send" not in page_text(client.get("/console/conversations/10"))
    response = client.post("/console/conversations/send", data=sms(csrf))
    assert response.status_code == 403 and "messages.write" in page_text(response) and outbound() == []


def test_a_key_without_messages_read_has_no_conversations(client, load):
    load(tenant_fixture("acme", scopes=["appointments.read"]))
    sign_in(client, TOKEN)
    assert "/console/conversations" not in page_text(client.get("/console/"))
    for path in ("/console/conversations", "/console/conversations/10"):
        response = client.get(path)
        assert response.status_code == 403 and "messages.read" in page_text(response)


def api_status(client, message_id: int) -> tuple[str, str | None]:
    body = client.get(f"/api/v1/messages/{message_id}", headers=auth_headers(TOKEN)).get_json()
    return body["delivery_status"], body.get("delivery_error")


def console_item(client, message: Message) -> str:
    html = page_text(client.get(f"/console/conversations/{message.conversation_id}"))
    return html.split(f'id="message-{message.id}"')[1].split("</li>")[0]


def test_the_console_and_the_api_never_disagree_about_a_messages_state(app, client, shop):
    """Issue 23, item 11: at each step of a message's life (queued, handed to the provider, the
    provider's receipt, a failure), the thread shows the state GET /messages/<id> answers."""
    csrf = sign_in(client, TOKEN)
    assert client.post("/console/conversations/send", data=sms(csrf)).status_code == 303
    message = Message.get(Message.direction == "outbound")
    seen = []

    def both_say(expected: str) -> None:
        status, _ = api_status(client, message.id)
        seen.append(status)
        assert status == expected
        assert f"status-{status}" in console_item(client, message)

    both_say("queued")
    delivery.attempt(message.id, app.config)  # the log provider takes it: "logged"
    both_say("logged")
    external = Message.get_by_id(message.id).external_uuid
    record_receipt(external, "delivered", None, False, actor.provider("gateway"), "id")
    both_say("delivered")
    record_receipt(external, "sent", None, False, actor.provider("gateway"), "id")  # late: no move back
    both_say("delivered")
    assert seen == ["queued", "logged", "delivered", "delivered"]


def test_a_failed_message_shows_the_apis_status_and_error(app, client, shop):
    csrf = sign_in(client, TOKEN)
    assert client.post("/console/conversations/send", data=sms(csrf)).status_code == 303
    message = Message.get(Message.direction == "outbound")
    delivery.attempt(message.id, app.config)
    external = Message.get_by_id(message.id).external_uuid
    record_receipt(
        external, "undelivered", "30003 unreachable handset", False, actor.provider("twilio"), "id"
    )
    status, error = api_status(client, message.id)
    assert (status, error) == ("undelivered", "30003 unreachable handset")
    item = console_item(client, message)
    assert "status-undelivered" in item and "30003 unreachable handset" in item

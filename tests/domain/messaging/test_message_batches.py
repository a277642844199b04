"""A delivery job takes the due messages queued with its own, sends them, records them together."""

from email import message_from_bytes

import pytest
from peewee import OperationalError

from shop.domain.messaging import delivery
from shop.models import Event, Message
from tests.helpers import auth_headers
from tests.helpers.messages import send, shop_fixture
from tests.helpers.receivers import SmtpSink


@pytest.fixture
def queued(client, load):
    """`queued(n)` sends n emails through the API; their ids, oldest first, all still queued."""
    load(shop_fixture(send_rate_per_minute=100))
    headers = auth_headers("sk_test_acme_token_0001")

    def _queued(count: int) -> list[int]:
        for i in range(count):
            response = send(client, headers, ticket_id="1001", channel="email", body=f"Ready {i}")
            assert response.status_code == 202
        return [m.id for m in Message.select().order_by(Message.id)]

    return _queued


def bodies(sink) -> list[str]:
    return [message_from_bytes(e.content).get_payload(decode=True).decode() for e in sink.messages]


def statuses() -> list[str]:
    return [m.delivery_status for m in Message.select().order_by(Message.id)]


def test_a_job_sends_the_due_messages_queued_with_its_own_and_their_jobs_find_nothing(queued):
    ids = queued(3)
    with SmtpSink() as sink:
        config = {"SMTP_URL": sink.url, "SEND_RETRY_DELAYS": "10"}
        assert delivery.attempt(ids[0], config) == []
        assert bodies(sink) == ["Ready 0", "Ready 1", "Ready 2"]
        assert statuses() == ["sent"] * 3
        assert Event.select().where(Event.type == "message.sent").count() == 3
        assert delivery.attempt(ids[1], config) == []  # already sent: nothing to do
        assert len(sink.messages) == 3


def test_a_job_takes_at_most_a_batch(queued):
    ids = queued(delivery.BATCH + 2)
    with SmtpSink() as sink:
        delivery.attempt(ids[-1], {"SMTP_URL": sink.url, "SEND_RETRY_DELAYS": "10"})
        assert len(sink.messages) == delivery.BATCH
    sent = [m.id for m in Message.select().where(Message.delivery_status == "sent")]
    assert ids[-1] in sent  # its own message, then the oldest due ones
    assert sent == sorted([ids[-1], *ids[: delivery.BATCH - 1]])


def test_a_job_out_of_time_sends_its_own_and_gives_the_rest_back(queued, monkeypatch):
    ids = queued(3)
    monkeypatch.setattr(delivery, "BATCH_SECONDS", -1)
    with SmtpSink() as sink:
        again = delivery.attempt(ids[-1], {"SMTP_URL": sink.url, "SEND_RETRY_DELAYS": "10"})
        assert bodies(sink) == ["Ready 2"]  # its own, though the others are older
    assert statuses() == ["queued", "queued", "sent"]
    assert again == [(ids[0], 0.0), (ids[1], 0.0)]  # the task schedules their jobs at once
    assert all(m.claimed_until is None for m in Message.select().where(Message.id != ids[-1]))


def test_what_was_sent_before_a_batch_broke_is_recorded(queued, monkeypatch):
    ids = queued(3)
    real = delivery.providers.deliver

    def deliver(outgoing, *urls):  # the third message meets something nobody foresaw
        if outgoing.body == "Ready 2":
            raise RuntimeError("unforeseen")
        return real(outgoing, *urls)

    monkeypatch.setattr(delivery.providers, "deliver", deliver)
    with SmtpSink() as sink:
        again = delivery.attempt(ids[0], {"SMTP_URL": sink.url, "SEND_RETRY_DELAYS": "10"})
        assert bodies(sink) == ["Ready 0", "Ready 1"]
    assert statuses() == ["sent", "sent", "queued"]  # the broken one waits for its retry
    assert again == [(ids[2], 10.0)]
    assert "unexpected error: RuntimeError" in Message.get_by_id(ids[2]).delivery_error


def test_a_batch_broken_by_the_database_still_records_what_was_sent(queued, monkeypatch):
    ids = queued(3)
    real = delivery.providers.deliver

    def deliver(outgoing, *urls):
        if outgoing.body == "Ready 1":
            raise delivery.providers.TransientFailure("SMTP 451")
        return real(outgoing, *urls)

    def failed(*args):  # recording the failure meets a locked database
        raise OperationalError("database is locked")

    monkeypatch.setattr(delivery.providers, "deliver", deliver)
    monkeypatch.setattr(delivery, "_failed", failed)
    with SmtpSink() as sink, pytest.raises(OperationalError):
        delivery.attempt(ids[0], {"SMTP_URL": sink.url, "SEND_RETRY_DELAYS": "10"})
    assert bodies(sink) == ["Ready 0"]
    assert statuses() == ["sent", "sending", "sending"]  # the rest wait for their claim to lapse

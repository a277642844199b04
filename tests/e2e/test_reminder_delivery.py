"""Reminders through real consumer processes to a real SMTP server and an SMS gateway on loopback
(issue 25): two consumers, and a consumer SIGKILLed mid-burst, hand each reminder to the send
pipeline once."""

import json
import os
import signal
from collections import Counter
from datetime import UTC, datetime, timedelta
from email import message_from_bytes
from zoneinfo import ZoneInfo

import pytest

from shop import clock
from shop.domain.messaging import delivery
from shop.models import AppointmentReminder, Message
from tests.helpers import tenant_fixture
from tests.helpers.processes import wait_until
from tests.helpers.receivers import HttpReceiver, SmtpSink

COUNT = 30  # appointments, each with one reminder: half by SMS, half by email


def shop_with_due_reminders(load) -> str:
    """A shop whose COUNT reminders fall due a day and a half from now; the clock offset (for the
    consumers' SHOP_CLOCK_OFFSET) that makes them due, with the appointments still ahead."""
    day = (datetime.now(UTC) + timedelta(days=2)).astimezone(ZoneInfo("America/New_York")).date()
    appointments = [
        {
            "id": 500 + i,
            "customer_name": f"Customer {i}",
            # an odd one's phone is no number: its reminder goes by email
            "customer_phone": f"+1555555{i:04d}" if i % 2 == 0 else "n/a",
            "customer_email": f"c{i}@example.com",
            "scheduled_date": day.isoformat(),
            "scheduled_time": f"12:{i:02d}",
        }
        for i in range(COUNT)
    ]
    booking = {"enabled": True, "reminders": [{"before_minutes": 1440, "channels": ["sms", "email"]}]}
    load(tenant_fixture("acme", name="Acme Phone Repair", booking=booking, appointments=appointments))
    assert AppointmentReminder.select().where(AppointmentReminder.status == "pending").count() == COUNT
    offset = (min(r.scheduled_for for r in AppointmentReminder.select()) - clock.now()).total_seconds()
    offset += 3 * 3600  # every reminder due (their appointments span half an hour), none started
    clock.advance(offset)
    return str(offset)


def all_sent():
    reminders = AppointmentReminder.select()
    return reminders.count() == COUNT and all(r.status == "sent" for r in reminders)


def all_delivered():
    return Message.select().where(Message.delivery_status == "sent").count() == COUNT


def check_rows():
    """One message per reminder, automated, on the channel its appointment allows."""
    rows = list(AppointmentReminder.select().order_by(AppointmentReminder.appointment))
    assert len({r.message_id for r in rows}) == COUNT and Message.select().count() == COUNT
    assert [r.channel for r in rows] == ["sms" if i % 2 == 0 else "email" for i in range(COUNT)]
    assert all(m.automated for m in Message.select())


@pytest.mark.postgres_only
def test_two_consumers_send_each_reminder_once(load, start_consumer):
    offset = shop_with_due_reminders(load)
    with SmtpSink() as smtp, HttpReceiver(default=(200, {"id": "gw-1"})) as gateway:
        env = {"SHOP_CLOCK_OFFSET": offset, "SHOP_SMTP_URL": smtp.url, "SHOP_SMS_GATEWAY_URL": gateway.url}
        start_consumer(**env)  # each sweeps at start: every reminder is enqueued twice
        start_consumer(**env)
        wait_until(all_sent, timeout=60)
        wait_until(all_delivered, timeout=60)
        references = Counter(json.loads(r["body"])["reference"] for r in gateway.requests)
        recipients = Counter(e.rcpt_tos[0] for e in smtp.messages)
    check_rows()
    assert len(references) == COUNT // 2 and set(references.values()) == {1}
    assert len(recipients) == COUNT // 2 and set(recipients.values()) == {1}
    body = message_from_bytes(smtp.messages[0].content).get_payload(decode=True).decode()
    assert body.startswith("Hi Customer") and "a reminder from Acme Phone Repair" in body


@pytest.mark.sqlite_only
def test_a_consumer_killed_mid_burst_loses_no_reminder_and_queues_none_twice(load, start_consumer):
    offset = shop_with_due_reminders(load)
    # slow providers, so the kill lands while reminders and messages are still being worked
    with SmtpSink(delay=0.1) as smtp, HttpReceiver(default=(200, {"id": "gw-1"}), delay=0.1) as gateway:
        env = {
            "SHOP_CLOCK_OFFSET": offset,
            "SHOP_SMTP_URL": smtp.url,
            "SHOP_SMS_GATEWAY_URL": gateway.url,
            "SHOP_SEND_CLAIM_SECONDS": "2",
        }
        first = start_consumer(**env)
        wait_until(lambda: len(smtp.messages) + len(gateway.requests) >= 3, timeout=60)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        handed_before_kill = Message.select().count()
        start_consumer(**env)  # its start-up sweeps: the reminders left pending, the messages left due
        wait_until(all_sent, timeout=90)
        wait_until(all_delivered, timeout=90)
        references = Counter(json.loads(r["body"])["reference"] for r in gateway.requests)
        recipients = Counter(e.rcpt_tos[0] for e in smtp.messages)
    assert handed_before_kill < COUNT * 2  # sanity: the burst was not over at the kill
    check_rows()  # the reminder level: exactly one message for each reminder, whatever the kill
    assert len(references) == COUNT // 2 and len(recipients) == COUNT // 2  # every one arrived
    # the provider level is the send pipeline's: only a message the provider accepted while the
    # killed consumer had not yet recorded it goes again (at most a batch per worker thread), with
    # the same `reference` for the gateway to drop; no reminder is ever queued a second time
    repeats = sum(n - 1 for n in references.values()) + sum(n - 1 for n in recipients.values())
    assert repeats <= 4 * delivery.BATCH

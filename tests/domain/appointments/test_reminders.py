"""Reminders and customer messages (issue 25), by moving the service's clock: DST, quiet hours,
too_late, and the rows every appointment change leaves."""

from datetime import datetime

import pytest

from shop.domain.appointments import reminders
from shop.domain.appointments.appointments import book_from_activity
from shop.domain.appointments.texts import sms_segments
from shop.domain.messaging import delivery
from shop.models import AppointmentReminder, Message, Notification, Suppression
from shop.queue import settings
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.appointments import set_clock
from tests.helpers.query_plans import sqlite_plan

HEADERS = auth_headers("sk_test_acme_token_0001")
BASE = "/api/v1/appointments"
ALL_DAY = {day: [["00:00", "24:00"]] for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")}
RULES = [{"before_minutes": 1440, "channels": ["sms", "email"]}, {"before_minutes": 120, "channels": ["sms"]}]
ANN = {"customer_name": "Ann Lee", "customer_phone": "+15555550100", "customer_email": "ann@example.com"}


def shop(load, **booking):
    settings_ = {"enabled": True, "capacity": 5, "max_days_ahead": 365, "hours": ALL_DAY, "reminders": RULES}
    settings_.update(booking)
    load(
        tenant_fixture(
            "acme",
            name="Acme Phone Repair",
            booking=settings_,
            customers=[{"id": 1, "display_name": "Ann Lee", "phone": "+15555550100", "sms_consent": True}],
            tickets=[{"id": "1001", "customer_id": 1}],
            send_rate_per_minute=1,
        )
    )


def book(client, day, time, **extra):
    response = client.post(
        BASE, headers=HEADERS, json={**ANN, "scheduled_date": day, "scheduled_time": time, **extra}
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def rows(client, appointment_id):
    response = client.get(f"{BASE}/{appointment_id}/reminders", headers=HEADERS)
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["object"] == "list" and body["total"] == len(body["data"])
    return body["data"]


def states(client, appointment_id):
    """(kind, before_minutes, scheduled_for, status, reason) of each row, in the route's order."""
    return [
        (r["kind"], r["before_minutes"], r["scheduled_for"], r["status"], r["reason"])
        for r in rows(client, appointment_id)
    ]


def run_consumer():
    """What the sweep and its jobs do at this moment of the clock: every due reminder's job."""
    return [reminders.claim_due(reminder_id)[0] for reminder_id in reminders.due_reminder_ids()]


def test_24_and_2_hours_before_across_the_autumn_change_are_real_hours(client, load):
    shop(load)
    set_clock("2026-10-20T12:00:00")
    # Sunday 1 November 2026, 10:00 EST (15:00 UTC); the clocks went back at 02:00 that night
    first = book(client, "2026-11-01", "10:00")
    # 03:00 EST that morning (08:00 UTC): two real hours before is 01:00 EST, the second 01:00
    early = book(client, "2026-11-01", "03:00")
    assert states(client, first) == [
        ("reminder", 1440, "2026-10-31T15:00:00.000Z", "pending", None),  # 11:00 EDT the day before
        ("reminder", 120, "2026-11-01T13:00:00.000Z", "pending", None),  # 08:00 EST
    ]
    assert [r[2] for r in states(client, early)] == ["2026-10-31T08:00:00.000Z", "2026-11-01T06:00:00.000Z"]

    set_clock("2026-10-31T14:59:00")
    run_consumer()
    assert [r[3] for r in states(client, first)] == ["pending", "pending"]
    set_clock("2026-10-31T15:00:30")
    assert "sent" in run_consumer()
    sent = rows(client, first)[0]
    assert (sent["status"], sent["channel"]) == ("sent", "sms")
    message = client.get(f"/api/v1/messages/{sent['message_id']}", headers=HEADERS)
    assert message.status_code == 200
    text = message.get_json()
    assert text["channel"] == "sms" and Message.get_by_id(text["id"]).recipient == "+15555550100"
    assert "Sun, Nov 1 at 10:00 AM" in text["body"] and sms_segments(text["body"]) == 1

    set_clock("2026-11-01T06:00:00")  # 01:00 EST, an hour after 01:00 EDT
    run_consumer()
    set_clock("2026-11-01T13:00:00")
    run_consumer()
    assert [r[3] for r in states(client, first)] == ["sent", "sent"]
    assert [r[3] for r in states(client, early)] == ["sent", "sent"]
    run_consumer()  # a second pass (a second consumer, a re-enqueue) sends nothing more
    assert Message.select().count() == 4


def test_24_hours_before_across_the_spring_change(client, load):
    shop(load)
    set_clock("2026-03-01T12:00:00")
    # Sunday 8 March 2026, 10:00 EDT (14:00 UTC): 24 hours before is 09:00 EST on the 7th
    appointment = book(client, "2026-03-08", "10:00")
    assert states(client, appointment)[0][2] == "2026-03-07T14:00:00.000Z"


def test_a_reminder_in_quiet_hours_moves_to_the_minute_before_they_begin(client, load):
    shop(load, quiet_hours=["21:00", "08:00"], reminders=[{"before_minutes": 120, "channels": ["sms"]}])
    set_clock("2026-11-20T12:00:00")
    appointment = book(client, "2026-12-02", "08:30")  # 06:30 local is quiet: 20:59 the evening before
    assert states(client, appointment) == [("reminder", 120, "2026-12-02T01:59:00.000Z", "pending", None)]


def test_quiet_hours_that_do_not_cross_midnight(client, load):
    shop(load, quiet_hours=["12:00", "13:00"], reminders=[{"before_minutes": 60, "channels": ["sms"]}])
    set_clock("2026-11-20T12:00:00")
    appointment = book(client, "2026-12-02", "13:30")  # 12:30 local is quiet: 11:59 (16:59 UTC)
    assert states(client, appointment)[0][2:4] == ("2026-12-02T16:59:00.000Z", "pending")


def test_booked_inside_quiet_hours_it_goes_out_when_they_end(client, load):
    shop(load, quiet_hours=["21:00", "08:00"], reminders=[{"before_minutes": 120, "channels": ["sms"]}])
    set_clock("2026-12-02T03:00:00")  # 22:00 local on the 1st
    appointment = book(client, "2026-12-02", "09:00")  # due 07:00 (quiet), 20:59 is past: 08:00
    assert states(client, appointment)[0][2:4] == ("2026-12-02T13:00:00.000Z", "pending")
    late = book(client, "2026-12-02", "08:00")  # due 07:00 (quiet), their end is the start: too late
    assert states(client, late)[0][3:] == ("skipped", "too_late")


def test_a_reminder_already_past_at_booking_is_too_late_and_never_sent(client, load):
    shop(load)
    set_clock("2026-12-01T12:00:00")  # 07:00 local
    appointment = book(client, "2026-12-01", "10:00")  # 3 hours ahead: the 24 h one is too late
    assert [r[3:] for r in states(client, appointment)] == [("skipped", "too_late"), ("pending", None)]
    set_clock("2026-12-01T14:00:00")
    run_consumer()
    assert [r[3] for r in states(client, appointment)] == ["skipped", "sent"]
    assert Message.select().count() == 1


def test_reschedule_replaces_the_pending_ones_and_tells_the_customer(client, load):
    shop(load, customer_messages={"reschedule": True})
    set_clock("2026-11-20T12:00:00")
    appointment = book(client, "2026-12-02", "10:00")
    moved = client.patch(f"{BASE}/{appointment}", headers=HEADERS, json={"scheduled_time": "11:00"})
    assert moved.status_code == 200
    got = states(client, appointment)
    assert [r for r in got if r[3] == "cancelled"] == [
        ("reminder", 1440, "2026-12-01T15:00:00.000Z", "cancelled", "rescheduled"),
        ("reminder", 120, "2026-12-02T13:00:00.000Z", "cancelled", "rescheduled"),
    ]
    assert [r for r in got if r[3] == "pending"] == [
        ("reminder", 1440, "2026-12-01T16:00:00.000Z", "pending", None),
        ("reminder", 120, "2026-12-02T14:00:00.000Z", "pending", None),
    ]
    notice = [r for r in rows(client, appointment) if r["kind"] == "reschedule"]
    assert len(notice) == 1 and notice[0]["status"] == "sent" and notice[0]["channel"] == "sms"
    assert (
        "moved your appointment to Wed, Dec 2 at 11:00 AM" in Message.get_by_id(notice[0]["message_id"]).body
    )
    # a change of duration alone replaces the reminders (same times) but sends no message
    client.patch(f"{BASE}/{appointment}", headers=HEADERS, json={"duration_minutes": 60})
    kinds = [r["kind"] for r in rows(client, appointment)]
    assert kinds.count("reschedule") == 1 and kinds.count("reminder") == 6
    assert len([r for r in rows(client, appointment) if r["status"] == "pending"]) == 2
    # the old rows never go out: at the old 24 h time nothing is due
    set_clock("2026-12-01T15:00:30")
    assert run_consumer() == []


@pytest.mark.parametrize(
    "path, body, reason",
    [
        ("cancel", {"reason": "Customer asked"}, "appointment_cancelled"),
        ("complete", None, "appointment_completed"),
        ("no_show", None, "appointment_no_show"),
    ],
)
def test_cancel_complete_and_no_show_cancel_the_pending_ones(client, load, path, body, reason):
    shop(load)
    set_clock("2026-11-20T12:00:00")
    appointment = book(client, "2026-12-02", "10:00")
    answer = client.post(f"{BASE}/{appointment}/{path}", headers=HEADERS, **({"json": body} if body else {}))
    assert answer.status_code == 200, answer.get_json()
    assert [r[3:] for r in states(client, appointment) if r[0] == "reminder"] == [("cancelled", reason)] * 2
    set_clock("2026-12-02T14:00:00")
    assert run_consumer() == [] and Message.select().count() == 0


def test_a_patch_to_cancelled_is_a_cancel_with_its_notice_and_message(client, load):
    shop(
        load,
        customer_messages={"cancellation": True},
        templates={"cancellation": "{shop}: {date} {time} is off."},
    )
    set_clock("2026-11-20T12:00:00")
    appointment = book(client, "2026-12-02", "10:00", ticket_id="1001")
    assert (
        client.patch(f"{BASE}/{appointment}", headers=HEADERS, json={"status": "cancelled"}).status_code
        == 200
    )
    got = rows(client, appointment)
    assert [r["reason"] for r in got if r["kind"] == "reminder"] == ["appointment_cancelled"] * 2
    (message_row,) = [r for r in got if r["kind"] == "cancellation"]
    assert (
        Message.get_by_id(message_row["message_id"]).body == "Acme Phone Repair: Wed, Dec 2 10:00 AM is off."
    )
    notice = Notification.get(Notification.type == "appointment_canceled")
    assert notice.scope == "global" and notice.ticket_id == 1001
    assert notice.details == {
        "appointment_id": int(appointment),
        "scheduled_date": "2026-12-02",
        "scheduled_time": "10:00",
        "cancellation_reason": None,
        "source": "api",
    }


def test_un_cancel_makes_new_reminders_and_sends_no_confirmation(client, load):
    shop(load, customer_messages={"confirmation": True})
    set_clock("2026-11-20T12:00:00")
    appointment = book(client, "2026-12-02", "10:00")
    assert [r["kind"] for r in rows(client, appointment)].count("confirmation") == 1
    client.post(f"{BASE}/{appointment}/cancel", headers=HEADERS, json={})
    reset = client.patch(f"{BASE}/{appointment}", headers=HEADERS, json={"status": "confirmed"})
    assert reset.status_code == 200, reset.get_json()
    got = states(client, appointment)
    assert sorted(r[3] for r in got if r[0] == "reminder") == ["cancelled", "cancelled", "pending", "pending"]
    assert [r[0] for r in got].count("confirmation") == 1


def test_a_cancel_committed_after_the_claim_stops_the_queued_message(client, load, app):
    shop(load)
    set_clock("2026-11-20T12:00:00")
    appointment = book(client, "2026-12-02", "10:00")
    set_clock("2026-12-01T15:00:30")
    assert run_consumer() == ["sent"]  # the consumer holds it: its message waits for the provider
    message_id = rows(client, appointment)[0]["message_id"]
    client.post(f"{BASE}/{appointment}/cancel", headers=HEADERS, json={})
    assert delivery.attempt(message_id, settings()) == []  # the send job finds nothing to send
    message = Message.get_by_id(message_id)
    assert message.delivery_status == "failed" and message.external_uuid is None
    assert [r[3:] for r in states(client, appointment)] == [("cancelled", "appointment_cancelled")] * 2


def test_a_cancel_committed_before_the_claim_leaves_the_job_nothing(client, load):
    shop(load)
    set_clock("2026-11-20T12:00:00")
    appointment = book(client, "2026-12-02", "10:00")
    set_clock("2026-12-01T15:00:30")
    due = reminders.due_reminder_ids()  # the sweep enqueued it
    client.post(f"{BASE}/{appointment}/cancel", headers=HEADERS, json={})
    assert [reminders.claim_due(reminder_id)[0] for reminder_id in due] == [None]
    assert Message.select().count() == 0


def due_burst(client, load, count):
    """`count` appointments, each with one SMS reminder, every reminder due and none started."""
    shop(load, reminders=[{"before_minutes": 240, "channels": ["sms"]}])
    set_clock("2026-11-20T12:00:00")
    booked = [book(client, "2026-12-02", f"{10 + i // 4:02d}:{(i % 4) * 15:02d}") for i in range(count)]
    set_clock("2026-12-02T14:00:30")  # the first starts at 15:00 UTC, the last reminder was at 13:45
    return [r["id"] for appointment in booked for r in rows(client, appointment)]


def test_the_reminder_job_delivers_the_messages_it_queued_without_a_send_job_each(client, load):
    from tasks import huey
    from tasks.reminders import send_reminder

    due = due_burst(client, load, 12)
    huey.storage.flush_queue()  # the bookings' own jobs are not the point here
    for reminder_id in reminders.due_reminder_ids():  # what the sweep enqueues
        send_reminder.call_local(reminder_id)
    assert huey.pending_count() == 0  # no second job per reminder
    sent = {r.id: r.message_id for r in AppointmentReminder.select() if r.kind == "reminder"}
    assert set(sent) == set(due) and len(set(sent.values())) == len(due)
    assert {m.delivery_status for m in Message.select().where(Message.id.in_(list(sent.values())))} == {
        "logged"
    }


def test_interleaved_jobs_each_deliver_their_own_batch_and_leave_nothing_queued(client, load):
    """The cause of messages left for the minute sweep when a reminder job delivered through
    delivery.attempt(own id): that claim takes the oldest due messages of anyone, and takes nothing
    when its own was taken first, while a reminder's message has no send job of its own to pick up
    what is left. attempt_these takes exactly the job's messages that no one took first."""
    due = due_burst(client, load, 12)
    outcome, first = reminders.claim_due(due[0])  # this job's batch: BATCH reminders
    assert outcome == "sent" and len(first) == reminders.BATCH
    left = [r.id for r in AppointmentReminder.select().where(AppointmentReminder.status == "pending")]
    outcome, second = reminders.claim_due(left[0])  # another job's, committed before the first delivers
    assert outcome == "sent" and len(second) == 12 - reminders.BATCH
    assert delivery.attempt_these(second, settings()) == []  # the later batch delivers first
    assert delivery.attempt_these(first, settings()) == []
    assert Message.select().where(Message.delivery_status == "queued").count() == 0
    assert Message.select().where(Message.delivery_status == "logged").count() == 12


def test_a_cancel_between_the_claim_and_the_jobs_delivery_sends_nothing(client, load):
    (reminder,) = due_burst(client, load, 1)
    outcome, queued = reminders.claim_due(reminder)
    appointment = AppointmentReminder.get_by_id(reminder).appointment_id
    client.post(f"{BASE}/{appointment}/cancel", headers=HEADERS, json={})
    assert outcome == "sent" and delivery.attempt_these(queued, settings()) == []
    message = Message.get_by_id(queued[0])
    assert message.delivery_status == "failed" and message.external_uuid is None


def test_the_first_usable_channel_is_chosen_and_none_is_no_channel(client, load):
    shop(load, reminders=[{"before_minutes": 60, "channels": ["sms", "email"]}])
    Suppression.create(tenant="acme", channel="sms", address="+15555550100")  # Ann sent STOP
    set_clock("2026-11-20T12:00:00")
    by_email = book(client, "2026-12-02", "10:00")
    nothing = book(client, "2026-12-02", "11:00", customer_phone="+15555550100", customer_email=None)
    set_clock("2026-12-02T14:00:30")
    run_consumer()
    set_clock("2026-12-02T15:00:30")
    run_consumer()
    assert rows(client, by_email)[0]["channel"] == "email" and rows(client, by_email)[0]["status"] == "sent"
    email = Message.get_by_id(rows(client, by_email)[0]["message_id"])
    assert (
        email.subject == "Reminder: your appointment on Wed, Dec 2 at 10:00 AM"
        and email.recipient == "ann@example.com"
    )
    assert states(client, nothing)[0][3:] == ("skipped", "no_channel")


def test_customer_messages_are_automated_and_spend_no_send_rate(client, load):
    shop(load, customer_messages={"confirmation": True})
    set_clock("2026-11-20T12:00:00")
    for hour in ("10:00", "11:00", "12:00"):
        book(client, "2026-12-02", hour)
    assert Message.select().where(Message.automated).count() == 3
    # the shop's allowance is one a minute: its own API send still goes out
    send = {"ticket_id": "1001", "channel": "sms", "content": "Ready", "to": "+15555550100"}
    assert client.post("/api/v1/messages/send", headers=HEADERS, json=send).status_code == 202
    confirmation = Message.select().where(Message.automated).first()
    assert confirmation.body.startswith(
        "Hi Ann Lee, Acme Phone Repair has booked your appointment for Wed, Dec 2"
    )
    assert confirmation.conversation.customer_id == 1  # matched by phone


def test_an_online_booking_adds_the_staff_notice(client, load):
    shop(load)
    set_clock("2026-11-20T12:00:00")
    body = {**ANN, "scheduled_date": "2026-12-02", "scheduled_time": "10:00"}
    answer = book_from_activity("acme", body)  # what `shop activity appointment.created` runs
    notice = Notification.get(Notification.type == "appointment_booked")
    assert notice.details == {
        "appointment_id": answer["id"],
        "scheduled_date": "2026-12-02",
        "scheduled_time": "10:00",
        "source": "online_booking",
    }
    assert AppointmentReminder.select().count() == 2


def test_a_tenant_without_settings_gets_no_rows(client, load):
    load(tenant_fixture("acme", booking={"enabled": True, "capacity": 5, "hours": ALL_DAY}))
    set_clock("2026-11-20T12:00:00")
    appointment = book(client, "2026-12-02", "10:00")
    assert rows(client, appointment) == []
    client.post(f"{BASE}/{appointment}/cancel", headers=HEADERS, json={})
    assert rows(client, appointment) == [] and Message.select().count() == 0


def test_every_default_sms_fits_one_segment_even_with_a_long_name(client, load):
    from shop.domain.appointments import texts

    class Fake:
        customer_name = "Maximilian Alexander Featherstonehaugh-Wolfeschlegelsteinhausen"
        scheduled_date, scheduled_time = datetime(2026, 12, 2).date(), "10:00"
        service_id = tech_id = service_description = None

    found = texts.values(Fake, "Acme Phone Repair and Accessories of Springfield", "America/New_York", None)
    for kind in texts.DEFAULTS:
        body, subject = texts.render(kind, "sms", found, {})
        assert sms_segments(body) == 1 and subject is None, (kind, body)
    assert texts.values(Fake, "Shop", "Europe/Paris", None)["time"] == "10:00"
    assert texts.values(Fake, "Shop", "Europe/Paris", None)["date"] == "Wed 2 Dec"


def test_racing_consumers_and_a_cancel_never_send_twice_or_after_the_cancel(client, load):
    """Two consumers' jobs and a cancel start together, again and again: each reminder gets at
    most one message, and once the cancel has committed no message of it is left to go out."""
    from shop.domain.appointments.appointments import cancel_appointment

    shop(load, reminders=[{"before_minutes": 60, "channels": ["sms"]}])
    set_clock("2026-11-20T12:00:00")
    booked = [book(client, "2026-12-02", f"{10 + i // 4:02d}:{(i % 4) * 15:02d}") for i in range(8)]
    set_clock("2026-12-02T14:00:30")  # every one due (the first starts at 15:00 UTC)
    for appointment in booked:
        (reminder,) = [r["id"] for r in rows(client, appointment)]
        _race(
            lambda reminder=reminder: reminders.claim_due(reminder)[0],
            lambda reminder=reminder: reminders.claim_due(reminder)[0],
            lambda appointment=appointment: cancel_appointment("acme", int(appointment), None),
        )
        row = AppointmentReminder.get_by_id(reminder)
        messages = list(Message.select().where(Message.body.contains("reminder")))
        mine = [m for m in messages if m.id == row.message_id]
        assert row.status == "cancelled" and row.reason == "appointment_cancelled"
        assert all(m.delivery_status == "failed" for m in mine)  # stopped before any provider saw it
    assert Message.select().where(Message.delivery_status == "queued").count() == 0
    assert len({m.id for m in Message.select()}) == Message.select().count() <= len(booked)


def test_jobs_that_deliver_what_they_claim_racing_a_cancel_send_nothing_after_it(client, load):
    """As above, with each job delivering what it queued at once (the consumer's send_reminder):
    a reminder the cancel stopped has no message that reached the provider; one that was handed
    over first stays sent; none is handed over twice."""
    import time

    from shop.domain.appointments.appointments import cancel_appointment

    def job(reminder):
        delivery.attempt_these(reminders.claim_due(reminder)[1], settings())

    def cancel_later(appointment, pause):  # from before the claim to after the delivery
        time.sleep(pause)
        cancel_appointment("acme", appointment, None)

    due = due_burst(client, load, 6)
    for i, reminder in enumerate(due):
        set_clock(f"2026-12-02T{11 + i // 4:02d}:{(i % 4) * 15:02d}:30")  # this one due, the next not yet
        appointment = AppointmentReminder.get_by_id(reminder).appointment_id
        _race(
            lambda reminder=reminder: job(reminder),
            lambda reminder=reminder: job(reminder),
            lambda appointment=appointment, pause=0.0005 * 2**i: cancel_later(appointment, pause),
        )
        row = AppointmentReminder.get_by_id(reminder)
        mine = list(Message.select().where(Message.id == row.message_id)) if row.message_id else []
        if row.status == "cancelled":
            assert all(m.delivery_status == "failed" for m in mine), (row.reason, mine[0].delivery_status)
        else:
            assert row.status == "sent" and mine[0].delivery_status == "logged"
    assert Message.select().where(Message.delivery_status.in_(("queued", "sending"))).count() == 0
    assert Message.select().where(Message.automated).count() <= len(due)


def _race(*jobs):
    """Run the jobs on threads of their own, released together; each closes its connection."""
    import threading

    from shop.db import db

    start = threading.Barrier(len(jobs))

    def run(work):
        start.wait()
        try:
            work()
        finally:
            db.close()

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)


def test_a_provider_that_never_accepts_fails_the_reminder(client, load):
    shop(load, reminders=[{"before_minutes": 60, "channels": ["sms"]}])
    set_clock("2026-11-20T12:00:00")
    appointment = book(client, "2026-12-02", "10:00")
    set_clock("2026-12-02T14:00:30")
    assert run_consumer() == ["sent"]
    message_id = rows(client, appointment)[0]["message_id"]
    # a gateway that refuses connections, and no retries left: the pipeline gives up at once
    config = {**settings(), "SMS_GATEWAY_URL": "http://127.0.0.1:9/sms", "SEND_RETRY_DELAYS": ""}
    assert delivery.attempt(message_id, config) == []
    assert Message.get_by_id(message_id).delivery_status == "failed"
    assert states(client, appointment)[0][3:] == ("failed", "provider_failed")


@pytest.mark.sqlite_only  # the plan's words are SQLite's; PostgreSQL's planner scans a table this small
def test_a_reminder_s_customer_is_found_through_both_address_indexes(app):
    """A reminder's customer, matched by phone or email, is looked up on each address's index, not
    by reading every customer of the shop (migration 18)."""
    params = {"tenant": "acme", "raw_phone": "+1 555 0001", "phone": "+15550001", "email": "ann@example.com"}
    plan = sqlite_plan(reminders.CUSTOMER_SQL, params)
    assert "INDEX customer_tenant_id_phone " in plan and "INDEX customer_tenant_id_lower_email " in plan, plan
    assert "customer_tenant_id (" not in plan, plan

"""Bad input to the Calendar and Conversations pages: unknown and other tenants' ids, forged form
fields and odd queries each get a friendly HTML 4xx page, never a 500, and change nothing."""

import pytest

from shop.models import Appointment, Event, Message
from tests.helpers import auth_headers, tenant_fixture
from tests.helpers.appointments import BASE, BOOKING, NEW, set_clock
from tests.helpers.console import assert_page, fill_ids, page_text, sign_in
from tests.helpers.messages import ANN_PHONE, shop_fixture

TOKEN = "sk_test_acme_token_0001"
LONG = "9" * 5000


@pytest.fixture
def world(client, load):
    """acme (messaging shop, booking, a thread, an appointment) and globex with the same; acme signed in."""
    set_clock("2026-11-25T12:00:00")
    load(
        shop_fixture(booking=BOOKING, conversations=[{"id": 10, "customer_id": 1}]),
        tenant_fixture(
            "globex",
            booking=BOOKING,
            customers=[{"id": 5, "display_name": "Gus", "phone": "+15555550105", "sms_consent": True}],
            tickets=[{"id": "2001", "customer_id": 5}],
            conversations=[{"id": 20, "customer_id": 5}],
        ),
    )
    ids = {}
    for tenant in ("acme", "globex"):
        response = client.post(BASE, json=NEW, headers=auth_headers(f"sk_test_{tenant}_token_0001"))
        ids[tenant] = {"appointment": str(response.get_json()["id"])}
    ids["csrf"] = sign_in(client, TOKEN)
    return ids


GET_CASES = [
    ("/console/calendar?week=2026-02-30", 400, "a week of no such day"),
    ("/console/calendar?week=next", 400, "a week that is no date"),
    ("/console/calendar?week=2026-1-5", 400, "a date not written YYYY-MM-DD"),
    ("/console/calendar?week=9999-12-31", 400, "the last week Python can hold"),
    ("/console/calendar?week=0001-01-01", 400, "the first day Python can hold"),
    ("/console/calendar?week=%EF%BC%92026-12-01", 400, "a full-width digit"),
    ("/console/calendar?week=2026-12-01&week=2026-12-08", 400, "a repeated week"),
    ("/console/calendar?week=" + LONG, 400, "an over-long week"),
    ("/console/calendar?book_date=2026-13-01", 400, "a booking prefill of no such month"),
    ("/console/calendar?book_time=" + LONG, 400, "an over-long booking prefill time"),
    ("/console/calendar?done=" + LONG, 400, "an over-long notice"),
    ("/console/conversations/abc", 400, "a conversation id that is no number"),
    ("/console/conversations/99999999999999999999", 400, "a huge conversation id"),
    ("/console/conversations/-1", 400, "a negative conversation id"),
    ("/console/conversations/" + LONG, 400, "an over-long conversation id"),
    ("/console/conversations/2147483647", 404, "an unknown conversation"),
    ("/console/conversations/20", 404, "another tenant's conversation"),
    ("/console/conversations?cursor=garbage", 400, "a forged threads cursor"),
    ("/console/conversations/10?cursor=garbage", 400, "a forged messages cursor"),
    ("/console/conversations?cursor=" + LONG, 400, "an over-long cursor"),
]


@pytest.mark.parametrize("path, status", [pytest.param(p, s, id=i) for p, s, i in GET_CASES])
def test_bad_page_requests_get_a_friendly_page(client, world, path, status):
    response = client.get(fill_ids(path, world))
    assert_page(response, status)
    assert "<h1>" in page_text(response)


BOOK = {
    "scheduled_date": "2026-12-01",
    "scheduled_time": "11:00",
    "customer_name": "Cy",
    "customer_phone": "+15555550111",
}
SEND = {"channel": "sms", "ticket_id": "1001", "to": ANN_PHONE, "content": "Ready!"}
POST_CASES = [
    ("/console/calendar/cancel", {"appointment_id": "abc"}, 400, "a non-numeric appointment id"),
    ("/console/calendar/cancel", {"appointment_id": "99999999999999999999"}, 400, "a huge appointment id"),
    ("/console/calendar/cancel", {"appointment_id": "-1"}, 400, "a negative appointment id"),
    ("/console/calendar/cancel", {"appointment_id": "1e3"}, 400, "an appointment id in exponent form"),
    ("/console/calendar/cancel", {}, 400, "a missing appointment id"),
    (
        "/console/calendar/cancel",
        {"appointment_id": ["{acme.appointment}", "{acme.appointment}"]},
        400,
        "a repeated appointment id",
    ),
    ("/console/calendar/cancel", {"appointment_id": LONG}, 400, "an over-long appointment id"),
    ("/console/calendar/cancel", {"appointment_id": "2147483647"}, 404, "an unknown appointment"),
    (
        "/console/calendar/cancel",
        {"appointment_id": "{globex.appointment}"},
        404,
        "cancelling another tenant's",
    ),
    (
        "/console/calendar/cancel",
        {"appointment_id": "{acme.appointment}", "reason": "r" * 501},
        400,
        "an over-long cancel reason",
    ),
    (
        "/console/calendar/cancel",
        {"appointment_id": "{acme.appointment}", "reason": ["a", "b"]},
        400,
        "a repeated cancel reason",
    ),
    (
        "/console/calendar/complete",
        {"appointment_id": "{globex.appointment}"},
        404,
        "completing another tenant's",
    ),
    (
        "/console/calendar/no-show",
        {"appointment_id": "{globex.appointment}"},
        404,
        "no-show of another tenant's",
    ),
    ("/console/calendar/no-show", {"appointment_id": "0"}, 400, "a zero appointment id"),
    ("/console/calendar/book", {**BOOK, "scheduled_date": "2026-02-30"}, 400, "booking no such day"),
    ("/console/calendar/book", {**BOOK, "scheduled_date": "99999-01-01"}, 400, "booking a five-digit year"),
    ("/console/calendar/book", {**BOOK, "scheduled_time": "25:00"}, 400, "booking no such time"),
    ("/console/calendar/book", {**BOOK, "scheduled_time": "10:00:00"}, 400, "booking a time with seconds"),
    ("/console/calendar/book", {**BOOK, "duration_minutes": "abc"}, 400, "a duration that is no number"),
    ("/console/calendar/book", {**BOOK, "duration_minutes": "999999"}, 400, "a huge duration"),
    ("/console/calendar/book", {**BOOK, "duration_minutes": "0"}, 400, "a zero duration"),
    ("/console/calendar/book", {**BOOK, "duration_minutes": "\u00b2"}, 400, "a superscript-digit duration"),
    ("/console/calendar/book", {**BOOK, "duration_minutes": "-30"}, 400, "a negative duration"),
    ("/console/calendar/book", {**BOOK, "customer_name": ""}, 400, "booking without a name"),
    ("/console/calendar/book", {**BOOK, "customer_name": "n" * 256}, 400, "an over-long name"),
    ("/console/calendar/book", {**BOOK, "customer_phone": ["1", "2"]}, 400, "a repeated phone"),
    ("/console/calendar/book", {**BOOK, "customer_email": "not-an-email"}, 400, "a bad email"),
    ("/console/calendar/book", {**BOOK, "notes": "n" * 5001}, 400, "over-long notes"),
    ("/console/conversations/send", {**SEND, "ticket_id": "2001"}, 404, "sending on another tenant's ticket"),
    ("/console/conversations/send", {**SEND, "ticket_id": LONG}, 400, "an over-long ticket id"),
    ("/console/conversations/send", {**SEND, "ticket_id": ""}, 400, "no ticket id"),
    ("/console/conversations/send", {**SEND, "content": ["a", "b"]}, 400, "repeated content"),
    ("/console/conversations/send", {**SEND, "channel": ["sms", "email"]}, 400, "two channels"),
    ("/console/conversations/send", {**SEND, "to": "t" * 321}, 400, "an over-long recipient"),
    ("/console/conversations/send", {**SEND, "content": "c" * 100_001}, 400, "over-long content"),
    ("/console/conversations/send", {**SEND, "to": "+15555550177"}, 422, "an SMS to a stranger's number"),
    (
        "/console/conversations/send",
        {"channel": "email", "ticket_id": "1001", "content": "Hi", "subject": "Hi\r\nBcc: all@evil.test"},
        400,
        "a subject with a line break (SMTP header injection)",
    ),
    (
        "/console/conversations/send",
        {**SEND, "channel": "email", "to": "someone@else.example"},
        400,
        "an email to someone not the customer",
    ),
]


@pytest.mark.parametrize("path, form, status", [pytest.param(p, f, s, id=i) for p, f, s, i in POST_CASES])
def test_forged_forms_get_a_friendly_page_and_change_nothing(client, world, path, form, status):
    before = _state()
    data = {"csrf_token": world["csrf"], **{k: fill_ids(v, world) for k, v in form.items()}}
    response = client.post(path, data=data)
    assert_page(response, status)
    assert _state() == before


@pytest.mark.parametrize(
    "path, form",
    [
        pytest.param("/console/calendar/cancel", {"appointment_id": "{acme.appointment}"}, id="cancel"),
        pytest.param("/console/calendar/book", BOOK, id="book"),
        pytest.param("/console/conversations/send", SEND, id="send"),
    ],
)
@pytest.mark.parametrize("csrf", [None, "forged"], ids=["no CSRF token", "a forged CSRF token"])
def test_a_form_without_the_session_s_csrf_token_is_refused(client, world, path, form, csrf):
    before = _state()
    data = {k: fill_ids(v, world) for k, v in form.items()}
    if csrf:
        data["csrf_token"] = csrf
    response = client.post(path, data=data)
    assert response.status_code == 403 and "not sent from the console" in page_text(response)
    assert _state() == before


def _state() -> tuple:
    appointments = tuple(Appointment.select().order_by(Appointment.id).tuples())
    messages = tuple(Message.select(Message.id).tuples())
    return appointments, messages, Event.select().count()

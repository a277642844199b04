"""The feed's rules in the domain: sequence raised by every appointment domain function, the window,
the body's shape, the ETag's inputs, revocation, and the console and CLI faces over the same calls."""

import json
import re
from datetime import date

import icalendar
import pytest

from shop import clock
from shop.domain import actor
from shop.domain.appointments import appointments as rules
from shop.domain.appointments import feeds, ics
from shop.models import Appointment, CalendarFeed
from shop.platform.errors import ApiError
from tests.helpers import tenant_fixture
from tests.helpers.appointments import BOOKING, NEW, set_clock

ROOT = "https://shop.example.com"


@pytest.fixture
def shop(load):
    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking=BOOKING), tenant_fixture("globex", booking=None))


def book(**fields) -> Appointment:
    body = {**NEW, "scheduled_date": date.fromisoformat(NEW["scheduled_date"]), **fields}
    return rules.create_appointment("acme", body)


def sequence(appointment_id: int) -> int:
    return Appointment.get_by_id(appointment_id).sequence


def make(tenant_id="acme", **body) -> tuple[CalendarFeed, str]:
    feed = feeds.create_feed(tenant_id, body, actor.SYSTEM, ROOT)
    return feed, feed.url.rsplit("/", 1)[1].removesuffix(".ics")


def test_a_new_appointment_starts_at_sequence_zero(app, shop):
    assert sequence(book().id) == 0


@pytest.mark.parametrize(
    ("change", "raised"),
    [
        ({"scheduled_date": date(2026, 12, 3)}, True),
        ({"scheduled_time": "11:00"}, True),
        ({"duration_minutes": 45}, True),
        ({"status": "confirmed"}, True),
        ({"customer_name": "Ann Smith"}, False),
        ({"notes": "bring the charger"}, False),
        ({"customer_phone": "+15555550111"}, False),
        ({"scheduled_time": "10:00"}, False),  # the same value: no change at all
    ],
    ids=lambda v: next(iter(v)) if isinstance(v, dict) else str(v),
)
def test_an_update_raises_the_sequence_only_for_time_duration_or_status(app, shop, change, raised):
    booked = book()
    rules.update_appointment("acme", booked.id, change)
    assert sequence(booked.id) == (1 if raised else 0)


def test_cancel_complete_no_show_and_un_cancel_each_raise_it(app, shop):
    booked = book()
    rules.cancel_appointment("acme", booked.id, "ill")
    assert sequence(booked.id) == 1
    rules.update_appointment("acme", booked.id, {"status": "confirmed"})
    assert sequence(booked.id) == 2
    rules.finish_appointment("acme", booked.id, "completed")
    assert sequence(booked.id) == 3
    rules.update_appointment("acme", booked.id, {"status": "confirmed"})
    rules.finish_appointment("acme", booked.id, "no_show")
    assert sequence(booked.id) == 5
    rules.update_appointment("acme", booked.id, {"status": "confirmed"})
    rules.update_appointment("acme", booked.id, {"status": "cancelled"})  # a PATCH to cancelled is a cancel
    assert sequence(booked.id) == 7


def test_linking_a_ticket_does_not_raise_it(app, load, shop):
    load(tenant_fixture("initech", tickets=[{"id": "7001"}]))
    booked = rules.create_appointment("initech", {**NEW, "scheduled_date": date(2026, 12, 1)})
    rules.link_ticket("initech", booked.id, "7001")
    assert sequence(booked.id) == 0


def test_a_refused_change_leaves_the_sequence(app, shop):
    booked = book()
    rules.cancel_appointment("acme", booked.id, None)
    with pytest.raises(ApiError):
        rules.cancel_appointment("acme", booked.id, None)
    with pytest.raises(ApiError):
        rules.update_appointment("acme", booked.id, {"scheduled_time": "11:00"})  # reset first
    assert sequence(booked.id) == 1


def test_a_tech_off_the_roster_is_refused_and_a_shop_without_settings_has_none(app, shop):
    with pytest.raises(ApiError) as refused:
        make(tech_id="nobody")
    assert (refused.value.status, refused.value.code, refused.value.param) == (
        400,
        "invalid_field",
        "tech_id",
    )
    with pytest.raises(ApiError):
        make("globex", tech_id="alex")
    assert CalendarFeed.select().count() == 0


def test_the_token_is_long_random_and_stored_only_as_its_hash(app, shop):
    feed, token = make()
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
    stored = CalendarFeed.get_by_id(feed.id)
    assert stored.token_hash == feeds.hash_feed_token(token) and token not in json.dumps(
        stored.__data__, default=str
    )
    assert feeds.open_feed(token).feed.id == feed.id
    assert feeds.open_feed(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert feeds.webcal_url(feed.url).startswith("webcal://shop.example.com/calendar/")


def test_a_revoked_feed_no_longer_opens(app, shop):
    feed, token = make()
    assert feeds.revoke_feed("acme", feed.id, actor.SYSTEM) == {
        "object": "calendar_feed",
        "id": feed.id,
        "deleted": True,
    }
    assert feeds.open_feed(token) is None
    with pytest.raises(ApiError):
        feeds.revoke_feed("acme", feed.id, actor.SYSTEM)
    assert CalendarFeed.get_by_id(feed.id).revoked_by == "system"


def test_another_tenant_cannot_revoke_a_feed(app, shop):
    feed, token = make()
    with pytest.raises(ApiError) as refused:
        feeds.revoke_feed("globex", feed.id, actor.SYSTEM)
    assert refused.value.status == 404
    assert feeds.open_feed(token) is not None


def test_the_window_is_30_days_back_to_the_booking_window_in_the_shops_zone(app, shop, load):
    _, token = make()
    opened = feeds.open_feed(token)
    assert (opened.first, opened.last) == (date(2026, 10, 26), date(2027, 1, 24))
    # 03:00 UTC on the 26th is still the 25th in New York
    set_clock("2026-11-26T03:00:00")
    assert feeds.open_feed(token).first == date(2026, 10, 26)
    _, other = make("globex")  # no booking settings: 60 days ahead
    assert feeds.open_feed(other).last - feeds.open_feed(other).first == (
        date(2027, 1, 24) - date(2026, 10, 26)
    )


def test_the_body_is_valid_rfc5545_with_every_rule(app, shop):
    booked = book(customer_email="ann@example.com", notes="secret door code", service_description="Battery")
    _, token = make()
    calendar = icalendar.Calendar.from_ical(ics.render_feed(feeds.open_feed(token), ROOT))
    assert calendar.errors == [] if hasattr(calendar, "errors") else True
    (event,) = calendar.walk("VEVENT")
    for name in ("UID", "DTSTAMP", "DTSTART", "DTEND", "SEQUENCE", "SUMMARY", "STATUS"):
        assert name in event
    assert str(event["UID"]) == f"appointment-{booked.id}-acme@repair-shop-service"
    assert str(event["URL"]).startswith(f"{ROOT}/console/calendar?week=2026-12-01")
    text = ics.render_feed(feeds.open_feed(token), ROOT).decode()
    assert "\r\n" in text and all(len(line.encode()) <= 75 for line in text.split("\r\n"))
    for secret in ("+15555550100", "ann@example.com", "secret door code"):
        assert secret not in text.replace("\r\n ", "")


def test_control_characters_never_reach_the_feed(app, shop):
    Appointment.create(
        tenant="acme",
        customer_name="Ann\x07 Lee\x1b[31m",
        customer_phone="+15555550100",
        scheduled_date=date(2026, 12, 1),
        scheduled_time="10:00",
        service_description="Line one\nline two",
    )
    _, token = make()
    text = ics.render_feed(feeds.open_feed(token), ROOT).decode()
    assert "\x07" not in text and "\x1b" not in text
    (event,) = icalendar.Calendar.from_ical(text).walk("VEVENT")
    assert str(event["SUMMARY"]) == "Ann Lee[31m: Line one\nline two"


def test_the_etag_follows_every_input_and_nothing_else(app, shop):
    booked = book()
    feed, token = make()

    def etag():
        return feeds.feed_etag(feeds.open_feed(token), ROOT)

    first = etag()
    assert etag() == first
    assert feeds.feed_etag(feeds.open_feed(token), "https://other.example.com") != first
    rules.update_appointment("acme", booked.id, {"notes": "not in the feed, but updated_at is"})
    second = etag()
    assert second != first
    clock.advance(30)
    assert etag() == second  # time alone changes nothing within the day
    rules.update_appointment("acme", booked.id, {"scheduled_time": "11:00"})
    assert etag() != second


def test_a_fetch_is_stamped_on_the_feed(app, shop):
    feed, token = make()
    feeds.note_fetch(feeds.open_feed(token).feed)
    assert CalendarFeed.get_by_id(feed.id).last_fetched_at is not None


def test_the_cli_makes_a_feed_and_prints_its_links(app, runner, shop):
    result = runner.invoke(args=["shop", "calendar-feed", "create", "--tenant", "acme", "--tech", "alex"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert printed["object"] == "calendar_feed" and printed["tech_id"] == "alex"
    assert printed["url"].startswith("http://127.0.0.1:5000/calendar/")
    assert printed["webcal_url"].startswith("webcal://127.0.0.1:5000/calendar/")
    token = printed["url"].rsplit("/", 1)[1].removesuffix(".ics")
    assert feeds.open_feed(token).feed.id == printed["id"]
    refused = runner.invoke(args=["shop", "calendar-feed", "create", "--tenant", "acme", "--tech", "nobody"])
    assert refused.exit_code != 0 and "nobody" in refused.output
    assert runner.invoke(args=["shop", "calendar-feed", "create", "--tenant", "nope"]).exit_code != 0

"""Calendar feeds: the routes that make, list and revoke them, and GET /calendar/<token>.ics itself."""

from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import icalendar
import pytest

from shop.models import CalendarFeed
from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.appointments import BASE, BOOKING, set_clock

FEEDS = f"{BASE}/calendar_feeds"
ACME = auth_headers("sk_test_acme_token_0001")
GLOBEX = auth_headers("sk_test_globex_token_0001")
PHONE, EMAIL = "+15555550100", "ann@example.com"


def appointment(id_, day, time="10:00", **fields) -> dict:
    row = {
        "id": id_,
        "customer_name": f"Customer {id_}",
        "customer_phone": PHONE,
        "customer_email": EMAIL,
        "service_description": "Screen",
        "scheduled_date": day,
        "scheduled_time": time,
        "duration_minutes": 60,
        "notes": "Gate code 4321, call +15555550199",
    }
    row.update(fields)
    return row


@pytest.fixture
def shop(load):
    """acme (New York) with four appointments in the feed's window and two outside it; globex with one."""
    set_clock("2026-11-25T12:00:00")
    load(
        tenant_fixture(
            "acme",
            booking=BOOKING,
            appointments=[
                appointment(200, "2026-12-01", tech_id="alex", customer_name="Ann Lee"),
                appointment(201, "2026-12-02", "14:30", tech_id="bo", customer_name="Bob Ray"),
                appointment(202, "2026-11-20", tech_id="alex"),  # 5 days back: in
                appointment(203, "2026-10-20"),  # 36 days back: out
                appointment(204, "2027-01-23"),  # 59 days ahead: in
                appointment(205, "2027-01-30"),  # 66 days ahead, past the 60-day window: out
            ],
        ),
        tenant_fixture(
            "globex", booking=BOOKING, appointments=[appointment(300, "2026-12-01", tech_id="alex")]
        ),
    )
    return ACME


def make_feed(client, headers=ACME, **body) -> dict:
    response = client.post(FEEDS, json=body, headers=headers)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


def feed_path(created: dict) -> str:
    return urlsplit(created["url"]).path


def fetch(client, created: dict, **headers):
    return client.get(feed_path(created), headers=headers)


def parse(response) -> icalendar.Calendar:
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/calendar"
    return icalendar.Calendar.from_ical(response.data)


def events_by_id(calendar: icalendar.Calendar) -> dict[int, icalendar.Event]:
    found = {}
    for event in calendar.walk("VEVENT"):
        uid = str(event["UID"])
        assert uid.startswith("appointment-")
        found[int(uid.split("-")[1])] = event
    return found


# --- the routes -------------------------------------------------------------------------------------


def test_a_feed_is_made_with_its_url_once_and_listed_without_it(client, shop):
    created = make_feed(client, tech_id="alex", hide_customer_names=True, description="Alex's phone")
    assert list(created) == [
        "object",
        "id",
        "tech_id",
        "hide_customer_names",
        "description",
        "created_at",
        "last_fetched_at",
        "url",
    ]
    assert created["object"] == "calendar_feed" and created["id"].startswith("calfeed_")
    assert created["tech_id"] == "alex" and created["hide_customer_names"] is True
    assert created["description"] == "Alex's phone" and created["last_fetched_at"] is None
    assert created["url"].startswith("http://localhost/calendar/") and created["url"].endswith(".ics")
    token = feed_path(created).removeprefix("/calendar/").removesuffix(".ics")
    stored = CalendarFeed.get_by_id(created["id"])
    assert token not in str(stored.__data__)  # only the token's hash is kept
    listed = client.get(FEEDS, headers=shop).get_json()
    assert listed["object"] == "list" and listed["has_more"] is False
    assert listed["data"] == [{key: value for key, value in created.items() if key != "url"}]


def test_the_defaults_and_the_public_url_setting(app, client, shop, monkeypatch):
    monkeypatch.setitem(app.config, "PUBLIC_URL", "https://shop.example.com/")
    created = make_feed(client)
    assert created["tech_id"] is None and created["hide_customer_names"] is False
    assert created["description"] is None
    assert created["url"].startswith("https://shop.example.com/calendar/")
    assert fetch(client, created).status_code == 200


def test_the_list_pages_newest_first(client, shop):
    made = [make_feed(client, description=f"feed {i}")["id"] for i in range(3)]
    first = client.get(f"{FEEDS}?limit=2", headers=shop).get_json()
    assert first["has_more"] is True
    second = client.get(f"{FEEDS}?limit=2&cursor={first['next_cursor']}", headers=shop).get_json()
    assert [f["id"] for f in first["data"] + second["data"]] == made[::-1]


def test_a_revoked_feed_is_404_and_leaves_the_list(client, shop):
    created = make_feed(client)
    assert fetch(client, created).status_code == 200
    response = client.delete(f"{FEEDS}/{created['id']}", headers=shop)
    assert response.status_code == 200
    assert response.get_json() == {"object": "calendar_feed", "id": created["id"], "deleted": True}
    assert_error(fetch(client, created), 404, "not_found", "token")
    assert client.get(FEEDS, headers=shop).get_json()["data"] == []
    assert_error(client.delete(f"{FEEDS}/{created['id']}", headers=shop), 404, "not_found", "id")


def test_another_tenants_feed_cannot_be_seen_or_revoked(client, shop):
    theirs = make_feed(client, headers=GLOBEX)
    assert client.get(FEEDS, headers=shop).get_json()["data"] == []
    assert_error(client.delete(f"{FEEDS}/{theirs['id']}", headers=shop), 404, "not_found", "id")
    assert fetch(client, theirs).status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "scope"),
    [
        ("get", FEEDS, "appointments.read"),
        ("post", FEEDS, "appointments.write"),
        ("delete", f"{FEEDS}/calfeed_5f2c0e5b9a1d4c7e8f0a1b2c", "appointments.write"),
    ],
    ids=["listing needs appointments.read", "making needs appointments.write", "revoking too"],
)
def test_each_route_needs_its_scope(client, load, method, path, scope):
    others = [s for s in ("appointments.read", "appointments.write", "messages.read") if s != scope]
    load(tenant_fixture("acme", scopes=others))
    response = getattr(client, method)(path, headers=ACME, **({"json": {}} if method == "post" else {}))
    assert_error(response, 403, "insufficient_scope")
    assert CalendarFeed.select().count() == 0


def case(case_id, body, code, param, status=400):
    return pytest.param(body, status, code, param, id=case_id)


BAD_BODIES = [
    case("an unknown tech", {"tech_id": "nobody"}, "invalid_field", "tech_id"),
    case("an empty tech", {"tech_id": ""}, "invalid_field", "tech_id"),
    case("a tech over 40 characters", {"tech_id": "t" * 41}, "invalid_field", "tech_id"),
    case("a tech as a number", {"tech_id": 7}, "invalid_field", "tech_id"),
    case("a tech as a list", {"tech_id": ["alex"]}, "invalid_field", "tech_id"),
    case("a tech with a NUL", {"tech_id": "al\x00ex"}, "invalid_field", "tech_id"),
    case("hide as a string", {"hide_customer_names": "true"}, "invalid_field", "hide_customer_names"),
    case("hide as a number", {"hide_customer_names": 1}, "invalid_field", "hide_customer_names"),
    case("hide as null", {"hide_customer_names": None}, "invalid_field", "hide_customer_names"),
    case("hide as a list", {"hide_customer_names": [True]}, "invalid_field", "hide_customer_names"),
    case("a description over 255", {"description": "d" * 256}, "invalid_field", "description"),
    case("a description as a number", {"description": 2**64}, "invalid_field", "description"),
    case("a description as an object", {"description": {"a": 1}}, "invalid_field", "description"),
    case("a description with a NUL", {"description": "front\x00desk"}, "invalid_field", "description"),
    case("a description with a lone surrogate", {"description": "\ud800"}, "invalid_field", "description"),
    case("an unknown field", {"url": "https://example.com/x.ics"}, "invalid_field", "url"),
    case("a body that is a list", [{"tech_id": "alex"}], "invalid_json", None),
    case("a body that is a string", "alex", "invalid_json", None),
]


@pytest.mark.parametrize(("body", "status", "code", "param"), BAD_BODIES)
def test_a_bad_body_is_refused_and_makes_no_feed(client, load, shop, body, status, code, param):
    response = client.post(FEEDS, json=body, headers=shop)
    assert_error(response, status, code, param)
    assert CalendarFeed.select().count() == 0


@pytest.mark.parametrize(
    ("data", "content_type", "status", "code"),
    [
        ('{"description": ', "application/json", 400, "invalid_json"),
        ('{"hide_customer_names": NaN}', "application/json", 400, "invalid_json"),
        ("description=x", "application/x-www-form-urlencoded", 415, "unsupported_media_type"),
        ('{"description": "x"}', "text/plain", 415, "unsupported_media_type"),
    ],
    ids=["cut-off JSON", "NaN", "a form body", "JSON sent as text"],
)
def test_unreadable_bodies_are_refused(client, shop, data, content_type, status, code):
    response = client.post(FEEDS, data=data, content_type=content_type, headers=shop)
    assert_error(response, status, code)
    assert CalendarFeed.select().count() == 0


def test_a_description_of_exactly_255_is_kept(client, shop):
    assert make_feed(client, description="d" * 255)["description"] == "d" * 255


@pytest.mark.parametrize(
    "feed_id",
    ["calfeed_nothex", "calfeed_" + "0" * 24, "x" * 300, "calfeed_%00", "whsub_3f9a2c1b7e8d4f6011223344"],
    ids=["not hex", "an unknown feed", "an over-long id", "a NUL", "another kind of id"],
)
def test_revoking_a_feed_that_is_not_there_is_404(client, shop, feed_id):
    assert_error(client.delete(f"{FEEDS}/{feed_id}", headers=shop), 404, "not_found", "id")


@pytest.mark.parametrize(
    ("query", "code", "param"),
    [
        ("limit=0", "invalid_query", "limit"),
        ("limit=abc", "invalid_query", "limit"),
        ("cursor=zz", "invalid_cursor", "cursor"),
    ],
    ids=["a zero limit", "a word for a limit", "a made-up cursor"],
)
def test_bad_list_queries_are_refused(client, shop, query, code, param):
    assert_error(client.get(f"{FEEDS}?{query}", headers=shop), 400, code, param)


def test_revoking_takes_no_body_fields(client, shop):
    created = make_feed(client)
    response = client.delete(f"{FEEDS}/{created['id']}", json={"force": True}, headers=shop)
    assert_error(response, 400, "invalid_field", "force")
    assert fetch(client, created).status_code == 200


# --- the feed ---------------------------------------------------------------------------------------


def test_the_feed_parses_back_with_every_event_of_the_window(client, shop):
    created = make_feed(client)
    response = fetch(client, created)
    calendar = parse(response)
    assert str(calendar["VERSION"]) == "2.0"
    assert calendar["REFRESH-INTERVAL"].to_ical() == b"PT15M"
    assert str(calendar["X-PUBLISHED-TTL"]) == "PT15M"
    assert sorted(events_by_id(calendar)) == [200, 201, 202, 204]
    event = events_by_id(calendar)[200]
    assert str(event["SUMMARY"]) == "Ann Lee: Screen"
    assert event["UID"] == "appointment-200-acme@repair-shop-service"
    assert event["SEQUENCE"] == 0 and str(event["STATUS"]) == "TENTATIVE"
    start = event.decoded("DTSTART")
    assert start.replace(tzinfo=None) == datetime(2026, 12, 1, 10, 0)
    assert event.decoded("DTEND") - start == timedelta(minutes=60)
    assert event["DTSTART"].params["TZID"] == "America/New_York"
    zones = [str(tz["TZID"]) for tz in calendar.walk("VTIMEZONE")]
    assert zones == ["America/New_York"]


def test_the_feed_never_holds_the_phone_email_or_notes(client, shop):
    text = fetch(client, make_feed(client)).get_data(as_text=True)
    unfolded = text.replace("\r\n ", "")
    for secret in (PHONE, "5555550100", EMAIL, "Gate code", "+15555550199"):
        assert secret not in unfolded


def test_names_are_hidden_on_request(client, shop):
    text = fetch(client, make_feed(client, hide_customer_names=True)).get_data(as_text=True)
    for name in ("Ann Lee", "Bob Ray", "Customer 202"):
        assert name not in text
    summaries = {
        str(e["SUMMARY"])
        for e in parse(fetch(client, make_feed(client, hide_customer_names=True))).walk("VEVENT")
    }
    assert summaries == {"Appointment: Screen"}


def test_a_techs_feed_has_only_that_techs_appointments(client, shop):
    alex = parse(fetch(client, make_feed(client, tech_id="alex")))
    assert sorted(events_by_id(alex)) == [200, 202]
    bo = parse(fetch(client, make_feed(client, tech_id="bo")))
    assert sorted(events_by_id(bo)) == [201]


def test_another_tenants_appointments_never_appear(client, shop):
    ours = events_by_id(parse(fetch(client, make_feed(client))))
    theirs = events_by_id(parse(fetch(client, make_feed(client, headers=GLOBEX))))
    assert 300 not in ours and sorted(theirs) == [300]
    assert sorted(events_by_id(parse(fetch(client, make_feed(client, headers=GLOBEX, tech_id="alex"))))) == [
        300
    ]


def test_a_cancel_shows_cancelled_with_a_higher_sequence(client, shop):
    created = make_feed(client)
    before = events_by_id(parse(fetch(client, created)))[200]
    assert client.post(f"{BASE}/200/cancel", json={"reason": "Sick"}, headers=shop).status_code == 200
    after = events_by_id(parse(fetch(client, created)))[200]
    assert str(after["STATUS"]) == "CANCELLED"
    assert after["SEQUENCE"] > before["SEQUENCE"]
    assert after["UID"] == before["UID"]
    assert str(after["SUMMARY"]).startswith("Cancelled: ")


@pytest.mark.parametrize(
    "change",
    [
        {"scheduled_date": "2026-12-03"},
        {"scheduled_time": "11:00"},
        {"duration_minutes": 90},
        {"status": "confirmed"},
    ],
    ids=["a new date", "a new time", "a new duration", "a status move"],
)
def test_a_reschedule_or_status_move_raises_the_sequence(client, shop, change):
    created = make_feed(client)
    before = events_by_id(parse(fetch(client, created)))[200]
    response = client.patch(f"{BASE}/200", json=change, headers=shop)
    assert response.status_code == 200, response.get_data(as_text=True)
    after = events_by_id(parse(fetch(client, created)))[200]
    assert after["SEQUENCE"] > before["SEQUENCE"] and after["UID"] == before["UID"]


def test_the_sequence_only_goes_up_through_a_whole_life(client, shop):
    created = make_feed(client)
    seen = [events_by_id(parse(fetch(client, created)))[200]["SEQUENCE"]]
    steps = [
        ("patch", f"{BASE}/200", {"scheduled_time": "11:00"}),
        ("post", f"{BASE}/200/cancel", {}),
        ("patch", f"{BASE}/200", {"status": "confirmed"}),  # un-cancel
        ("post", f"{BASE}/200/complete", None),
        ("patch", f"{BASE}/200", {"status": "confirmed"}),
        ("post", f"{BASE}/200/no_show", None),
    ]
    for method, path, body in steps:
        response = getattr(client, method)(path, json=body, headers=shop)
        assert response.status_code == 200, response.get_data(as_text=True)
        seen.append(events_by_id(parse(fetch(client, created)))[200]["SEQUENCE"])
    assert seen == sorted(set(seen)) and len(seen) == len(steps) + 1


def test_a_name_edit_changes_the_etag_but_not_the_sequence(client, shop):
    created = make_feed(client)
    first = fetch(client, created)
    response = client.patch(f"{BASE}/200", json={"customer_name": "Ann Lee-Smith"}, headers=shop)
    assert response.status_code == 200
    second = fetch(client, created, **{"If-None-Match": first.headers["ETag"]})
    event = events_by_id(parse(second))[200]
    assert str(event["SUMMARY"]) == "Ann Lee-Smith: Screen" and event["SEQUENCE"] == 0


def test_an_unchanged_feed_is_304_and_a_change_is_200(client, shop):
    created = make_feed(client)
    first = fetch(client, created)
    etag = first.headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"')
    again = fetch(client, created, **{"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b"" and again.headers["ETag"] == etag
    assert fetch(client, created, **{"If-None-Match": f'"other", W/{etag}'}).status_code == 304
    assert fetch(client, created, **{"If-None-Match": '"other"'}).status_code == 200
    client.post(f"{BASE}/201/cancel", json={}, headers=shop)
    changed = fetch(client, created, **{"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["ETag"] != etag


def test_a_new_day_moves_the_window_and_the_etag(client, shop):
    created = make_feed(client)
    etag = fetch(client, created).headers["ETag"]
    set_clock("2026-11-26T12:00:00")
    assert fetch(client, created, **{"If-None-Match": etag}).status_code == 200


def test_a_booking_changes_the_etag(client, shop):
    created = make_feed(client)
    etag = fetch(client, created).headers["ETag"]
    body = {
        "customer_name": "Cy",
        "customer_phone": PHONE,
        "scheduled_date": "2026-12-04",
        "scheduled_time": "10:00",
    }
    assert client.post(BASE, json=body, headers=shop).status_code == 201
    response = fetch(client, created, **{"If-None-Match": etag})
    assert len(events_by_id(parse(response))) == 5


def test_last_fetched_at_is_stamped_at_most_once_a_minute(client, shop):
    created = make_feed(client)
    fetch(client, created)
    stamped = CalendarFeed.get_by_id(created["id"]).last_fetched_at
    assert abs(stamped - datetime(2026, 11, 25, 12, 0)) < timedelta(seconds=5)
    set_clock("2026-11-25T12:00:30")
    fetch(client, created)
    assert CalendarFeed.get_by_id(created["id"]).last_fetched_at == stamped
    set_clock("2026-11-25T12:01:05")
    fetch(client, created)
    restamped = CalendarFeed.get_by_id(created["id"]).last_fetched_at
    assert abs(restamped - datetime(2026, 11, 25, 12, 1, 5)) < timedelta(seconds=5)
    listed = client.get(FEEDS, headers=shop).get_json()["data"][0]
    assert listed["last_fetched_at"].startswith("2026-11-25T12:01:0")


@pytest.mark.parametrize(
    "path",
    [
        "/calendar/" + "A" * 43 + ".ics",
        "/calendar/short.ics",
        "/calendar/" + "A" * 400 + ".ics",
        "/calendar/%00" + "A" * 42 + ".ics",
    ],
    ids=["an unknown token", "a short one", "an over-long one", "a NUL"],
)
def test_an_unknown_token_is_the_spec_404(client, shop, path):
    assert_error(client.get(path), 404, "not_found", "token")


@pytest.mark.parametrize("path", ["/calendar/.ics", "/calendar/abc", "/calendar/abc.ics/x"])
def test_what_is_no_feed_address_at_all_is_the_spec_404_too(client, shop, path):
    assert_error(client.get(path), 404, "not_found")


def test_the_feed_asks_no_key_and_refuses_other_methods(client, shop):
    created = make_feed(client)
    assert fetch(client, created).status_code == 200
    assert_error(client.post(feed_path(created), json={}), 405, "method_not_allowed")
    assert client.head(feed_path(created)).status_code == 200


def test_guessing_tokens_is_limited_per_address(app, client, shop, monkeypatch):
    monkeypatch.setitem(app.config, "AUTH_FAILURES_PER_MINUTE", 3)
    created = make_feed(client)
    for _ in range(3):
        assert client.get("/calendar/" + "B" * 43 + ".ics").status_code == 404
    assert_error(client.get("/calendar/" + "B" * 43 + ".ics"), 429, "rate_limited")
    assert_error(fetch(client, created), 429, "rate_limited")  # the address, not the token


def test_an_appointment_across_the_dst_change_keeps_its_minutes(client, load):
    set_clock("2026-10-25T12:00:00")
    load(
        tenant_fixture(
            "acme",
            booking=BOOKING,
            appointments=[appointment(210, "2026-11-01", "01:30", duration_minutes=60)],
        )
    )
    event = events_by_id(parse(fetch(client, make_feed(client))))[210]
    start, end = event.decoded("DTSTART"), event.decoded("DTEND")
    assert start.astimezone(UTC) == datetime(2026, 11, 1, 5, 30, tzinfo=UTC)  # the first 01:30 (EDT)
    assert end.astimezone(UTC) - start.astimezone(UTC) == timedelta(minutes=60)  # 01:30 EST


def test_a_feed_token_never_reaches_a_log_line(client, shop, caplog):
    from shop.platform.redaction import redact

    created = make_feed(client)
    token = feed_path(created).removeprefix("/calendar/").removesuffix(".ics")
    line = f'127.0.0.1 - - "GET /calendar/{token}.ics HTTP/1.1" 200 -'
    assert token not in redact(line) and "/calendar/[redacted].ics" in redact(line)
    with caplog.at_level("INFO", logger="shop.request"):
        fetch(client, created)
    assert token not in caplog.text and "/calendar/<token>.ics" in caplog.text


def test_if_none_match_star_and_a_poll_without_it(client, shop):
    created = make_feed(client)
    first = fetch(client, created)
    assert fetch(client, created, **{"If-None-Match": "*"}).status_code == 304
    again = fetch(client, created)  # Google Calendar polls without If-None-Match: the same body
    assert (
        again.status_code == 200
        and again.data == first.data
        and again.headers["ETag"] == first.headers["ETag"]
    )


def test_a_post_without_a_body_makes_a_feed_of_the_whole_shop(client, shop):
    response = client.post(FEEDS, headers=shop)
    assert response.status_code == 201, response.get_data(as_text=True)
    created = response.get_json()
    assert created["tech_id"] is None and created["hide_customer_names"] is False
    assert sorted(events_by_id(parse(fetch(client, created)))) == [200, 201, 202, 204]

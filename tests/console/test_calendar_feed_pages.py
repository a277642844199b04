"""The console's Calendar feeds page: make a feed (webcal:// link shown once), list, revoke; bad forms."""

import re

import pytest

from shop.models import CalendarFeed
from tests.helpers import ALL_SCOPES, tenant_fixture
from tests.helpers.appointments import BOOKING, set_clock
from tests.helpers.console import assert_page, page_text, sign_in

TOKEN = "sk_test_acme_token_0001"
PAGE = "/console/calendar/feeds"


@pytest.fixture
def shop(load):
    set_clock("2026-11-25T12:00:00")
    load(
        tenant_fixture(
            "acme",
            booking=BOOKING,
            appointments=[
                {
                    "id": 200,
                    "customer_name": "Ann Lee",
                    "customer_phone": "+15555550100",
                    "scheduled_date": "2026-12-01",
                    "scheduled_time": "10:00",
                    "tech_id": "alex",
                }
            ],
        )
    )


def make(client, csrf, **fields):
    return client.post(PAGE, data={"csrf_token": csrf, **fields})


def test_the_calendar_links_to_the_feeds_page(client, shop):
    sign_in(client, TOKEN)
    assert f'href="{PAGE}"' in page_text(client.get("/console/calendar?week=2026-12-01"))
    html = page_text(client.get(PAGE))
    assert "No calendar feeds yet." in html and 'id="make-feed"' in html
    assert '<option value="alex">Alex</option>' in html


def test_a_feed_is_made_shown_once_and_serves_the_calendar(client, shop):
    csrf = sign_in(client, TOKEN)
    response = make(client, csrf, tech_id="alex", hide_customer_names="yes", description="Alex's phone")
    assert_page(response, 200)
    assert response.headers["Cache-Control"] == "no-store"
    html = page_text(response)
    webcal = re.search(r'id="webcal" href="(webcal://localhost/calendar/[A-Za-z0-9_-]{43}\.ics)"', html)
    assert webcal, html
    feed = client.get(webcal.group(1).replace("webcal://localhost", ""))
    assert feed.status_code == 200 and b"appointment-200-acme" in feed.data and b"Ann Lee" not in feed.data
    listed = page_text(client.get(PAGE))
    assert "Alex&#39;s phone" in listed and "tech alex" in listed and "hidden" in listed
    assert "webcal://" not in listed and "/calendar/" + webcal.group(1).rsplit("/", 1)[1] not in listed


def test_a_feed_is_revoked_from_the_page(client, shop):
    csrf = sign_in(client, TOKEN)
    html = page_text(make(client, csrf))
    path = re.search(r'id="feed-url"[^>]*>https?://localhost(/calendar/[^<]+\.ics)<', html).group(1)
    feed_id = CalendarFeed.get().id
    response = client.post(f"{PAGE}/revoke", data={"csrf_token": csrf, "feed_id": feed_id})
    assert response.status_code == 303 and response.headers["Location"].endswith(f"{PAGE}?done=revoked")
    shown = page_text(client.get(f"{PAGE}?done=revoked"))
    assert shown.count("answers 404 from now on") == 1  # the layout's notice, not a second one
    assert client.get(path).status_code == 404
    assert "No calendar feeds yet." in page_text(client.get(PAGE))


@pytest.mark.parametrize(
    ("form", "status"),
    [
        ({"tech_id": "nobody"}, 400),
        ({"tech_id": "t" * 41}, 400),
        ({"tech_id": ["alex", "bo"]}, 400),
        ({"hide_customer_names": "maybe"}, 400),
        ({"description": "d" * 256}, 400),
        ({"description": "a\x00b"}, 400),
    ],
    ids=[
        "an unknown tech",
        "an over-long tech",
        "two techs",
        "a hide value not offered",
        "a long description",
        "a NUL",
    ],
)
def test_a_bad_form_is_a_page_and_makes_nothing(client, shop, form, status):
    csrf = sign_in(client, TOKEN)
    assert_page(make(client, csrf, **form), status)
    assert CalendarFeed.select().count() == 0


@pytest.mark.parametrize(
    "feed_id", ["", "calfeed_" + "0" * 24, "x" * 41], ids=["none", "an unknown feed", "an over-long id"]
)
def test_revoking_what_is_not_there_is_a_page(client, shop, feed_id):
    csrf = sign_in(client, TOKEN)
    response = client.post(f"{PAGE}/revoke", data={"csrf_token": csrf, "feed_id": feed_id})
    assert response.status_code in (400, 404) and response.mimetype == "text/html"


def test_forms_need_the_csrf_token_and_the_write_scope(client, load, shop):
    sign_in(client, TOKEN)
    assert_page(make(client, "forged"), 403)
    assert CalendarFeed.select().count() == 0
    load(
        tenant_fixture(
            "globex",
            scopes=[s for s in ALL_SCOPES if s != "appointments.write"],
            booking=BOOKING,
        )
    )
    client.post("/console/sign-out", data={})
    csrf = sign_in(client, "sk_test_globex_token_0001")
    html = page_text(client.get(PAGE))
    assert 'id="make-feed"' not in html
    assert_page(make(client, csrf), 403)
    assert CalendarFeed.select().count() == 0

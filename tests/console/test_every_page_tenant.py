"""Every console page that names a record, found from the app's own routes (a new one is covered
the day it is added): signed in to acme as its owner, another shop's record id answers the 404
page, by GET and by a form's POST with the session's CSRF token, and nothing is written."""

import re

import pytest

from shop.models import ALL_MODELS
from tests.helpers import tenant_fixture
from tests.helpers.console import OWNER, assert_page, csrf_token, page_text, sign_in_as
from tests.helpers.console import teammates as users
from tests.helpers.records import ACME, GLOBEX

pytestmark = pytest.mark.usefixtures("cheap_password_hashes")

GLOBEX_SUB = "whsub_globex00000000000001"
# globex's record behind each path parameter of the console's routes
GLOBEX_IDS = {
    "conversation_id": "90",
    "customer_id": "21",
    "estimate_id": "5901",
    "invoice_id": "3901",
    "ticket_id": "2001",
    "lead_id": "6901",
    "key_id": "key_globex",
    "user_id": "99",
    "sub_id": GLOBEX_SUB,
    "delivery_id": "whd_0123456789abcdef01234567",
}
# a valid value for each field the record forms take, so each form reaches its record's lookup
# (a form that is wrong in itself is a 400 whichever shop's id it names)
FORM = {
    "since": "2026-01-01T00:00:00Z",
    "mode": "dry_run",
    "status": "Ready",
    "subject": "Mine now",
    "display_name": "Mine now",
    "amount": "1.00",
    "method": "cash",
    "reason": "test",
    "role": "staff",
    "confirm": "yes",
}
# what the session, the rate limit and the usage log write on any request
MOVING = {"UsageLog", "RateBucket", "ConsoleSession", "AuthFailure"}


def record_routes(app) -> list[tuple[str, str]]:
    """(method, path) of every console route naming a record, globex's ids filled in."""
    found = []
    for rule in app.url_map.iter_rules():
        names = re.findall(r"<(?:\w+:)?(\w+)>", rule.rule)
        if (
            not rule.rule.startswith("/console/")
            or not names
            or rule.endpoint.endswith((".unknown", ".asset"))
        ):
            continue
        missing = [name for name in names if name not in GLOBEX_IDS]
        assert not missing, f"{rule.rule}: add globex's record for {missing} to GLOBEX_IDS"
        path = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: GLOBEX_IDS[m.group(1)], rule.rule)
        found += [(method, path) for method in sorted(rule.methods & {"GET", "POST"})]
    return found


def rows() -> dict:
    return {m.__name__: m.select().count() for m in ALL_MODELS if m.__name__ not in MOVING}


@pytest.fixture
def owner(client, load):
    load(
        tenant_fixture("acme", users=users(OWNER), **ACME),
        tenant_fixture(
            "globex",
            users=[{"id": 99, "email": "gail@globex.test", "name": "Gail"}],
            conversations=[{"id": 90, "customer_id": 21, "messages": []}],
            webhook_subscriptions=[{"id": GLOBEX_SUB, "url": "https://hooks.example.com/g", "events": ["*"]}],
            **GLOBEX,
        ),
    )
    assert sign_in_as(client, *OWNER[:2]).status_code == 303
    return csrf_token(page_text(client.get("/console/")))


def test_the_table_finds_the_record_pages(app):
    routes = record_routes(app)
    assert len(routes) >= 25, routes
    assert ("GET", "/console/tickets/2001") in routes and (
        "POST",
        "/console/keys/key_globex/revoke",
    ) in routes


def test_another_shops_record_is_the_404_page_everywhere_and_nothing_is_written(app, client, owner):
    before = rows()
    for method, path in record_routes(app):
        if method == "GET":
            response = client.get(path)
        else:
            response = client.post(path, data={**FORM, "csrf_token": owner})
        assert response.status_code == 404, (method, path, response.status_code, page_text(response)[:300])
        assert_page(response, 404)
    assert rows() == before

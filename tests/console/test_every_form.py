"""Every form of the console and the customer pages, found from the app's own routes (so a new one
is covered the day it is added): a POST without the session's CSRF token, or with a forged one, is
refused with an HTML page and writes nothing."""

import re

import pytest

from shop.models import ALL_MODELS
from tests.helpers import tenant_fixture
from tests.helpers.console import OWNER, assert_page, csrf_token, page_text, sign_in_as
from tests.helpers.console import teammates as users

pytestmark = pytest.mark.usefixtures("cheap_password_hashes")

PREFIXES = ("/console/", "/portal/", "/book/")
# a value for each path parameter: the route is reached whatever the record (refused before it)
PARAMETERS = {
    "tenant_id": "acme",
    "hold_id": "hold_0123456789abcdef01234567",
    "reference": "0123456789abcdef",
    "token": "t" * 43,
    "rest": "anything",
}


def form_routes(app) -> list[str]:
    """Every POST route under the console and the customer pages, parameters filled in."""
    paths = set()
    for rule in app.url_map.iter_rules():
        if (
            "POST" in rule.methods
            and rule.rule.startswith(PREFIXES)
            and not rule.endpoint.endswith(".unknown")
        ):
            paths.add(re.sub(r"<(?:\w+:)?(\w+)>", lambda m: PARAMETERS.get(m.group(1), "1"), rule.rule))
    return sorted(paths)


def rows() -> dict:
    return {model.__name__: model.select().count() for model in ALL_MODELS}


@pytest.fixture
def owner(client, load):
    """acme (booking on, an owner teammate), the test client signed in as the owner."""
    booking = {
        "enabled": True,
        "hours": {d: [["09:00", "17:00"]] for d in ("mon", "tue", "wed", "thu", "fri")},
    }
    load(tenant_fixture("acme", users=users(OWNER), booking=booking))
    assert sign_in_as(client, *OWNER[:2]).status_code == 303
    return csrf_token(page_text(client.get("/console/")))


def test_the_table_finds_the_forms(app):
    routes = form_routes(app)
    assert len(routes) >= 35, routes
    for expected in (
        "/console/board/move",
        "/console/settings/appointments",
        "/portal/estimates/",
        "/book/acme/hold",
    ):
        assert any(path.startswith(expected) for path in routes), expected


@pytest.mark.parametrize("forged", [None, "forged-token"], ids=["no token", "a forged token"])
def test_every_form_refuses_a_post_without_the_sessions_csrf_token(app, client, owner, forged):
    before = rows()
    for path in form_routes(app):
        data = {"csrf_token": forged} if forged else {}
        response = client.post(path, data=data)
        assert response.status_code in (400, 403), (path, response.status_code)
        assert_page(response, response.status_code)
        assert "csrf" in page_text(response).lower() or "form" in page_text(response).lower(), path
    changed = {name: (before[name], count) for name, count in rows().items() if count != before[name]}
    assert set(changed) <= {"UsageLog", "RateBucket", "AuthFailure"}, changed

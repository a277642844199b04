"""Teammates in the console: email and password sign-in, the limits per account and per address,
the session rotated at sign-in and ended at sign-out, password change and disable, the owner pages,
and the teammate commands."""

import json

import pytest

from shop.domain import teammates
from shop.models import ConsoleSession, User
from tests.helpers import tenant_fixture
from tests.helpers.console import (
    OWNER,
    STAFF,
    assert_page,
    csrf_token,
    page_text,
    sign_in,
    sign_in_as,
)
from tests.helpers.console import teammates as users

pytestmark = pytest.mark.usefixtures("cheap_password_hashes")

TOKEN = "sk_test_acme_token_0001"


@pytest.fixture
def shop(load):
    load(
        tenant_fixture("acme", users=users(OWNER, STAFF)),
        tenant_fixture("globex", users=users(("gail@globex.test", "globex-password", "owner"))),
    )


def cookie_value(response, name: str = "shop_console") -> str:
    header = next(c for c in response.headers.getlist("Set-Cookie") if c.startswith(name + "="))
    return header.split("=", 1)[1].split(";")[0]


def test_a_teammate_signs_in_with_email_and_password_and_sees_the_console(client, shop):
    response = sign_in_as(client, OWNER[0].upper(), OWNER[1])
    assert response.status_code == 303 and response.headers["Location"] == "/console/"
    stored = ConsoleSession.get()
    assert stored.user.email == OWNER[0] and stored.api_key_id is None
    assert OWNER[1] not in cookie_value(response)
    overview = page_text(client.get("/console/"))
    assert "<h1>Overview</h1>" in overview and "olga@acme.test" in overview and ">owner<" in overview
    assert "Your key's usage" not in overview  # usage charts are an API key's
    for path in ("/console/webhooks", "/console/inbox", "/console/calendar", "/console/conversations"):
        assert client.get(path).status_code == 200, path
    assert User.get(User.email == OWNER[0]).password_hash.startswith("scrypt:")


def test_a_staff_teammate_is_refused_the_owner_pages(client, shop):
    sign_in_as(client, *STAFF[:2])
    html = page_text(client.get("/console/"))
    assert 'href="/console/webhooks"' not in html and 'href="/console/calendar"' in html
    refused = client.get("/console/webhooks")
    assert_page(refused, 403)
    assert "owner_only" in page_text(refused) and "Only the shop" in page_text(refused)
    token = csrf_token(html)
    assert_page(client.post("/console/webhooks/whsub_x/ping", data={"csrf_token": token}), 403)
    assert client.get("/console/inbox").status_code == 200


def test_a_staff_teammate_books_from_the_calendar_through_the_same_rules(client, load):
    from tests.helpers.appointments import BOOKING, set_clock

    set_clock("2026-11-25T12:00:00")
    load(tenant_fixture("acme", booking=BOOKING, users=users(STAFF)))
    sign_in_as(client, *STAFF[:2])
    token = csrf_token(page_text(client.get("/console/calendar?week=2026-12-01")))
    form = {"csrf_token": token, "customer_name": "Ann", "customer_phone": "+15555550100"}
    response = client.post(
        "/console/calendar/book", data={**form, "scheduled_date": "2026-12-01", "scheduled_time": "10:00"}
    )
    assert response.status_code == 303, page_text(response)[:500]


def test_a_wrong_password_is_shown_beside_the_field_and_counts(client, shop):
    response = sign_in_as(client, OWNER[0], "not-the-password")
    assert_page(response, 401)
    html = page_text(response)
    assert 'id="password-error"' in html and "do not match" in html and f'value="{OWNER[0]}"' in html
    assert User.get(User.email == OWNER[0]).failed_sign_ins == 1
    assert ConsoleSession.select().count() == 0
    assert sign_in_as(client, *OWNER[:2]).status_code == 303
    assert User.get(User.email == OWNER[0]).failed_sign_ins == 0


def test_an_account_is_locked_after_its_limit_even_with_the_right_password(app, client, shop, monkeypatch):
    monkeypatch.setitem(app.config, "SIGN_IN_FAILURES_PER_ACCOUNT", 3)
    for _ in range(3):
        assert sign_in_as(client, OWNER[0], "wrong-password-x").status_code == 401
    locked = sign_in_as(client, OWNER[0], OWNER[1])
    assert_page(locked, 429)
    assert int(locked.headers["Retry-After"]) > 0
    assert sign_in_as(client, *STAFF[:2]).status_code == 303  # another account is not locked


def test_an_address_is_blocked_after_its_limit_whatever_the_account(app, client, shop, monkeypatch):
    monkeypatch.setitem(app.config, "AUTH_FAILURES_PER_MINUTE", 3)
    for email in ("nobody@acme.test", OWNER[0], STAFF[0]):
        assert sign_in_as(client, email, "wrong-password-x").status_code == 401
    assert_page(sign_in_as(client, *OWNER[:2]), 429)
    assert_page(sign_in_as(client, *STAFF[:2]), 429)


def test_the_session_id_rotates_at_sign_in(client, shop):
    sign_in(client, TOKEN)
    before = client.get_cookie("shop_console", path="/console/").value
    response = sign_in_as(client, *OWNER[:2])
    after = cookie_value(response)
    assert after != before and ConsoleSession.select().count() == 1
    planted = client.application.test_client()
    planted.set_cookie("shop_console", before, path="/console/")
    assert planted.get("/console/").status_code == 303  # the old id names nothing any more


def test_sign_out_password_change_and_disable_each_end_the_session(client, app, shop):
    sign_in_as(client, *OWNER[:2])
    client.post("/console/sign-out", data={"csrf_token": csrf_token(page_text(client.get("/console/")))})
    assert client.get("/console/").status_code == 303 and ConsoleSession.select().count() == 0
    sign_in_as(client, *OWNER[:2])
    with app.app_context():
        teammates.set_password("acme", OWNER[0], "a-new-password-1")
    gone = client.get("/console/")
    assert gone.status_code == 303 and "reason=signed_out" in gone.headers["Location"]
    assert sign_in_as(client, *OWNER[:2]).status_code == 401
    assert sign_in_as(client, OWNER[0], "a-new-password-1").status_code == 303
    with app.app_context():
        teammates.disable_teammate("acme", OWNER[0])
    assert client.get("/console/").status_code == 303 and ConsoleSession.select().count() == 0
    assert sign_in_as(client, OWNER[0], "a-new-password-1").status_code == 401


def test_a_session_of_a_teammate_disabled_behind_its_back_ends(client, shop):
    sign_in_as(client, *STAFF[:2])
    User.update(disabled=True).where(User.email == STAFF[0]).execute()  # e.g. another process
    response = client.get("/console/inbox")
    assert response.status_code == 303 and "reason=account_ended" in response.headers["Location"]
    assert ConsoleSession.select().count() == 0


def test_the_sign_in_form_needs_its_csrf_token(client, shop):
    client.get("/console/sign-in")
    data = {"email": OWNER[0], "password": OWNER[1]}
    for forged in ({}, {"csrf_token": "x" * 43}):
        response = client.post("/console/sign-in", data={**data, **forged})
        assert_page(response, 403)
    assert ConsoleSession.select().count() == 0


def test_an_email_on_two_shops_signs_in_to_the_one_its_password_opens(client, load):
    load(
        tenant_fixture("acme", users=users(("pat@both.test", "acme-password-1", "staff"))),
        tenant_fixture("globex", users=users(("pat@both.test", "globex-password", "owner"))),
    )
    sign_in_as(client, "pat@both.test", "globex-password")
    assert ConsoleSession.get().tenant_id == "globex"


def test_an_email_whose_password_opens_two_shops_must_name_the_shop(client, load):
    same = ("pat@both.test", "same-password-1", "staff")
    load(tenant_fixture("acme", users=users(same)), tenant_fixture("globex", users=users(same)))
    response = sign_in_as(client, same[0], same[1])
    assert_page(response, 400)
    assert 'id="shop-error"' in page_text(response)
    assert sign_in_as(client, same[0], same[1], shop="globex").status_code == 303
    assert ConsoleSession.get().tenant_id == "globex"


def test_another_shop_s_records_stay_refused_to_a_teammate(client, shop, load):
    from tests.helpers import auth_headers
    from tests.helpers.webhooks import create

    sub = create(client, auth_headers("sk_test_globex_token_0001"), url="https://example.com/h").get_json()
    sign_in_as(client, *OWNER[:2])
    assert_page(client.get(f"/console/webhooks/{sub['id']}"), 404)
    token = csrf_token(page_text(client.get("/console/")))
    assert_page(client.post(f"/console/webhooks/{sub['id']}/ping", data={"csrf_token": token}), 404)


def test_a_teammate_s_typed_name_is_escaped(client, load):
    attack = {
        "email": "x@acme.test",
        "password": "xss-password-1",
        "role": "owner",
        "name": "<script>alert(1)</script>",
    }
    load(tenant_fixture("acme", users=[attack]))
    sign_in_as(client, attack["email"], attack["password"])
    html = page_text(client.get("/console/"))
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize(
    ("data", "field"),
    [
        pytest.param({"email": ""}, "email", id="no email"),
        pytest.param({"password": ""}, "password", id="no password"),
        pytest.param({"email": ["a@acme.test", "b@acme.test"]}, "email", id="two emails"),
        pytest.param({"password": ["a", "b"]}, "password", id="two passwords"),
        pytest.param({"email": "x" * 400}, "email", id="an over-long email"),
        pytest.param({"password": "p" * 5000}, "password", id="an over-long password"),
        pytest.param({"email": "olga\x00@acme.test"}, "email", id="a NUL in the email"),
        pytest.param({"shop": "acme\x00"}, "shop", id="a NUL in the shop id"),
        pytest.param({"password": "owner-password-1\x00"}, "password", id="a NUL in the password"),
        pytest.param({"email": "<script>alert(1)</script>"}, "password", id="markup as the email"),
        pytest.param({"shop": "s" * 100}, "shop", id="an over-long shop id"),
    ],
)
def test_bad_sign_in_input_is_shown_beside_its_field_and_signs_nobody_in(client, shop, data, field):
    fields = {"email": OWNER[0], "password": OWNER[1], **data}
    response = sign_in_as(client, fields.pop("email"), fields.pop("password"), **fields)
    assert response.status_code in (400, 401), page_text(response)[:300]
    html = page_text(response)
    assert f'id="{field}-error"' in html and "<script>alert(1)" not in html
    assert ConsoleSession.select().count() == 0


def test_user_create_prints_a_password_once_that_signs_in(runner, client, shop):
    result = runner.invoke(
        args=["shop", "user", "create", "--tenant", "acme", "--email", "new@acme.test", "--name", "Nia"]
    )
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert printed["role"] == "staff" and len(printed["password"]) >= 12
    stored = User.get(User.email == "new@acme.test")
    assert printed["password"] not in stored.password_hash
    assert sign_in_as(client, "new@acme.test", printed["password"]).status_code == 303


def test_user_set_password_reads_stdin_and_disable_stops_sign_in(runner, client, shop):
    sign_in_as(client, *STAFF[:2])
    result = runner.invoke(
        args=["shop", "user", "set-password", "--tenant", "acme", "--email", STAFF[0]],
        input="brand-new-pass-1\n",
    )
    assert result.exit_code == 0, result.output
    assert client.get("/console/").status_code == 303  # its session ended
    assert sign_in_as(client, STAFF[0], "brand-new-pass-1").status_code == 303
    result = runner.invoke(args=["shop", "user", "disable", "--tenant", "acme", "--email", STAFF[0]])
    assert result.exit_code == 0 and json.loads(result.output)["disabled"] is True
    assert sign_in_as(client, STAFF[0], "brand-new-pass-1").status_code == 401


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        pytest.param(
            ["create", "--tenant", "nobody", "--email", "a@b.test"], None, "No tenant", id="unknown shop"
        ),
        pytest.param(
            ["create", "--tenant", "acme", "--email", OWNER[0]], None, "already", id="a taken email"
        ),
        pytest.param(
            ["create", "--tenant", "acme", "--email", "not-an-email"], None, "email", id="a bad email"
        ),
        pytest.param(
            ["create", "--tenant", "acme", "--email", "a@b.test", "--role", "boss"],
            None,
            "boss",
            id="a bad role",
        ),
        pytest.param(
            ["set-password", "--tenant", "acme", "--email", OWNER[0]],
            "short\n",
            "12 to 200",
            id="a short password",
        ),
        pytest.param(
            ["set-password", "--tenant", "acme", "--email", OWNER[0]], "", "12 to 200", id="no password"
        ),
        pytest.param(
            ["set-password", "--tenant", "acme", "--email", "who@acme.test"],
            "long-enough-pass\n",
            "No teammate",
            id="unknown teammate",
        ),
        pytest.param(
            ["disable", "--tenant", "globex", "--email", OWNER[0]],
            None,
            "No teammate",
            id="another shop's teammate",
        ),
    ],
)
def test_user_commands_refuse_bad_input_and_change_nothing(runner, shop, args, stdin, message):
    before = [tuple(row) for row in User.select().order_by(User.id).tuples()]
    result = runner.invoke(args=["shop", "user", *args], input=stdin)
    assert result.exit_code != 0 and message in result.output, result.output
    assert [tuple(row) for row in User.select().order_by(User.id).tuples()] == before


def test_the_teammates_page_is_the_owners_only(client, shop):
    sign_in_as(client, *OWNER[:2])
    page = client.get("/console/teammates")
    assert page.status_code == 200
    assert STAFF[0] in page_text(page) and 'href="/console/teammates"' in page_text(page)
    assert "gail@globex.test" not in page_text(page)  # another shop's teammates never show
    sign_in_as(client, *STAFF[:2])
    assert 'href="/console/teammates"' not in page_text(client.get("/console/"))
    assert_page(client.get("/console/teammates"), 403)
    sign_in(client, TOKEN)  # an integrator's key has no role
    assert 'href="/console/teammates"' not in page_text(client.get("/console/"))
    assert_page(client.get("/console/teammates"), 403)

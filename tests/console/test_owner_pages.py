"""The owners' pages of the console (issue 27): API keys (list, make with the token shown once,
revoke with a confirm step) and teammates (add with a password shown once, change a role, disable),
through the same domain functions as `shop key` and `shop user`; owners only, CSRF, bad fields
beside the field with nothing written, tenant isolation, and no secret in any log line."""

import json
import logging
import re

import pytest

from shop.models import ApiKey, ConsoleSession, User
from shop.platform.redaction import RedactSecrets
from tests.helpers import auth_headers, tenant_fixture
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
GLOBEX_OWNER = ("gail@globex.test", "globex-password", "owner")
SECOND_OWNER = ("otto@acme.test", "owner-password-2", "owner")
SHOWN_ONCE = re.compile(r'<p class="secret" id="(?:token|password)"[^>]*>([^<]+)</p>')


@pytest.fixture
def shop(load):
    """acme (an owner, a staff teammate, one key) and globex (its own owner and key)."""
    load(
        tenant_fixture("acme", users=users(OWNER, STAFF)),
        tenant_fixture("globex", users=users(GLOBEX_OWNER)),
    )


@pytest.fixture
def owner(client, shop) -> str:
    """The test client signed in as acme's owner; the session's CSRF token."""
    assert sign_in_as(client, *OWNER[:2]).status_code == 303
    return csrf_token(page_text(client.get("/console/")))


def snapshot() -> list:
    """Every key and teammate as stored (what a refused write must leave alone)."""
    keys = [(k.id, k.revoked, tuple(k.scopes), k.mode) for k in ApiKey.select().order_by(ApiKey.id)]
    people = [(u.id, u.email, u.name, u.role, u.disabled) for u in User.select().order_by(User.id)]
    return [keys, people]


def make_key(client, csrf: str, mode: str = "test", scopes=("tickets.read",)):
    response = client.post("/console/keys", data={"csrf_token": csrf, "mode": mode, "scopes": list(scopes)})
    assert_page(response, 200)
    return response, SHOWN_ONCE.search(page_text(response)).group(1)


def user_id(email: str) -> int:
    return User.get(User.email == email).id


# ---- API keys ------------------------------------------------------------------------------------


def test_the_keys_page_lists_the_shops_keys_without_tokens_or_hashes(client, owner):
    html = page_text(client.get("/console/keys"))
    stored = ApiKey.get_by_id("key_acme")
    assert "<h1>API keys</h1>" in html and 'id="key-key_acme"' in html
    assert f"<code>{stored.token_prefix}…</code>" in html and "tickets.read" in html
    assert TOKEN not in html and stored.token_hash not in html
    assert "key_globex" not in html  # another shop's key


def test_an_owner_makes_a_key_whose_token_is_shown_once_and_works_in_the_api(client, owner):
    response, token = make_key(client, owner, "live", ["tickets.read", "customers.read"])
    html = page_text(response)
    assert token.startswith("sk_live_") and "Copy the token now" in html
    assert response.headers["Cache-Control"] == "no-store"
    made = ApiKey.get(ApiKey.id != "key_acme", ApiKey.tenant == "acme")
    assert made.mode == "live" and made.scopes == ["customers.read", "tickets.read"]
    assert made.token_hash != token and token not in json.dumps(list(made.__data__.values()), default=str)
    me = client.get("/api/v1/me", headers=auth_headers(token))
    assert me.status_code == 200 and me.get_json()["id"] == made.id
    listed = page_text(client.get("/console/keys"))
    assert made.id in listed and token not in listed  # never again


def test_a_key_revoked_from_the_page_is_refused_by_the_api_at_once(client, owner):
    _, token = make_key(client, owner)
    made = ApiKey.get(ApiKey.id != "key_acme", ApiKey.tenant == "acme")
    assert client.get("/api/v1/me", headers=auth_headers(token)).status_code == 200
    confirm = client.get(f"/console/keys/{made.id}/revoke")
    assert_page(confirm, 200)
    assert "Revoke the key" in page_text(confirm) and not ApiKey.get_by_id(made.id).revoked  # a GET asks
    done = client.post(f"/console/keys/{made.id}/revoke", data={"csrf_token": owner})
    assert done.status_code == 303 and done.headers["Location"] == "/console/keys?done=revoked"
    assert ApiKey.get_by_id(made.id).revoked
    assert client.get("/api/v1/me", headers=auth_headers(token)).status_code == 401
    assert client.get("/api/v1/me", headers=auth_headers(TOKEN)).status_code == 200  # the others live on
    assert "already revoked" in page_text(client.get(f"/console/keys/{made.id}/revoke"))


def test_a_console_session_of_a_key_revoked_from_the_page_ends(app, client, owner):
    integrator = app.test_client()
    sign_in(integrator, TOKEN)
    client.post("/console/keys/key_acme/revoke", data={"csrf_token": owner})
    gone = integrator.get("/console/")
    assert gone.status_code == 303 and "reason=key_ended" in gone.headers["Location"]


BAD_KEY_FORMS = [
    ({"mode": "prod", "scopes": ["tickets.read"]}, "mode", "an unknown mode"),
    ({"mode": "1", "scopes": ["tickets.read"]}, "mode", "a number for the mode"),
    ({"mode": ["test", "live"], "scopes": ["tickets.read"]}, "mode", "the mode sent twice"),
    ({"mode": "test" * 100, "scopes": ["tickets.read"]}, "mode", "an over-long mode"),
    ({"mode": "te\x00st", "scopes": ["tickets.read"]}, "mode", "a NUL in the mode"),
    ({"mode": "test\x1b", "scopes": ["tickets.read"]}, "mode", "a control character in the mode"),
    ({"mode": "test"}, "scopes", "no scope"),
    ({"mode": "test", "scopes": ["tickets.rule"]}, "scopes", "an unknown scope"),
    ({"mode": "test", "scopes": ["tickets.read", "admin"]}, "scopes", "an unknown scope beside a good one"),
    ({"mode": "test", "scopes": ["tickets.read\x00"]}, "scopes", "a NUL in a scope"),
    ({"mode": "test", "scopes": ["tickets.read\n"]}, "scopes", "a newline in a scope"),
    ({"mode": "test", "scopes": ["x" * 5000]}, "scopes", "an over-long scope"),
    ({"mode": "test", "scopes": ["tickets.read"] * 40}, "scopes", "more scopes than there are"),
    ({"mode": "test", "scopes": ["1"]}, "scopes", "a number for a scope"),
]


@pytest.mark.parametrize("form, field, _", BAD_KEY_FORMS, ids=[case[2] for case in BAD_KEY_FORMS])
def test_a_bad_key_form_is_refused_beside_its_field_and_makes_no_key(client, owner, form, field, _):
    before = snapshot()
    response = client.post("/console/keys", data={"csrf_token": owner, **form})
    assert_page(response, 400)
    html = page_text(response)
    assert f'id="{field}-error"' in html and 'role="alert"' in html
    assert snapshot() == before


def test_both_bad_key_fields_are_shown_at_once(client, owner):
    response = client.post("/console/keys", data={"csrf_token": owner, "mode": "prod"})
    assert_page(response, 400)
    assert 'id="mode-error"' in page_text(response) and 'id="scopes-error"' in page_text(response)


@pytest.mark.parametrize(
    "key_id",
    ["key_globex", "key_nobody", "key%00x", "k" * 65, "key_acme'--"],
    ids=["another shop's key", "no such key", "a NUL", "an over-long id", "a quote"],
)
def test_another_shops_key_is_a_404_page_and_stays_live(client, owner, key_id):
    assert_page(client.get(f"/console/keys/{key_id}/revoke"), 404)
    assert_page(client.post(f"/console/keys/{key_id}/revoke", data={"csrf_token": owner}), 404)
    assert not ApiKey.get_by_id("key_globex").revoked
    assert client.get("/api/v1/me", headers=auth_headers("sk_test_globex_token_0001")).status_code == 200


# ---- who may ---------------------------------------------------------------------------------------

OWNER_ROUTES = [
    ("GET", "/console/keys"),
    ("POST", "/console/keys"),
    ("GET", "/console/keys/key_acme/revoke"),
    ("POST", "/console/keys/key_acme/revoke"),
    ("GET", "/console/teammates"),
    ("POST", "/console/teammates"),
    ("POST", "/console/teammates/{owner}/role"),
    ("GET", "/console/teammates/{owner}/disable"),
    ("POST", "/console/teammates/{owner}/disable"),
]


def refused_everywhere(client, csrf: str) -> None:
    before = snapshot()
    form = {"csrf_token": csrf, "mode": "test", "scopes": "tickets.read", "email": "x@acme.test"}
    for method, path in OWNER_ROUTES:
        path = path.format(owner=user_id(OWNER[0]))
        response = client.get(path) if method == "GET" else client.post(path, data={**form, "role": "staff"})
        assert_page(response, 403)
        assert "owner_only" in page_text(response), path
    assert snapshot() == before


def test_a_staff_teammate_gets_the_403_page_everywhere_and_no_nav_entries(client, shop):
    sign_in_as(client, *STAFF[:2])
    html = page_text(client.get("/console/"))
    assert 'href="/console/keys"' not in html and 'href="/console/teammates"' not in html
    refused_everywhere(client, csrf_token(html))


def test_an_api_key_session_gets_the_403_page_everywhere(client, shop):
    csrf = sign_in(client, TOKEN)
    assert 'href="/console/keys"' not in page_text(client.get("/console/"))
    refused_everywhere(client, csrf)


def test_an_owner_sees_both_pages_in_the_nav(client, owner):
    html = page_text(client.get("/console/"))
    assert 'href="/console/keys"' in html and 'href="/console/teammates"' in html


@pytest.mark.parametrize("forged", [None, "forged"], ids=["no token", "a forged token"])
def test_every_owner_form_needs_the_sessions_csrf_token(client, owner, forged):
    before = snapshot()
    data = {"mode": "test", "scopes": "tickets.read", "email": "x@acme.test", "role": "owner"}
    if forged:
        data["csrf_token"] = forged
    for method, path in OWNER_ROUTES:
        if method == "POST":
            path = path.format(owner=user_id(STAFF[0]))
            assert_page(client.post(path, data=data), 403)
    assert snapshot() == before


# ---- teammates -------------------------------------------------------------------------------------


def test_an_owner_adds_a_teammate_whose_password_is_shown_once_and_signs_in(app, client, owner):
    form = {"csrf_token": owner, "email": "nia@acme.test", "name": "Nia", "role": "staff"}
    response = client.post("/console/teammates", data=form)
    assert_page(response, 200)
    html = page_text(response)
    password = SHOWN_ONCE.search(html).group(1)
    assert "Copy the password now" in html and response.headers["Cache-Control"] == "no-store"
    added = User.get(User.email == "nia@acme.test")
    assert (added.tenant_id, added.name, added.role, added.disabled) == ("acme", "Nia", "staff", False)
    assert password not in added.password_hash
    assert password not in page_text(client.get("/console/teammates"))
    assert sign_in_as(app.test_client(), "nia@acme.test", password).status_code == 303


def test_a_teammate_already_there_is_refused_beside_the_email(client, owner):
    before = snapshot()
    response = client.post("/console/teammates", data={"csrf_token": owner, "email": STAFF[0].upper()})
    assert_page(response, 409)
    assert 'id="email-error"' in page_text(response) and snapshot() == before


BAD_TEAMMATE_FORMS = [
    ({"name": "Nia"}, "email", "no email"),
    ({"email": "nia.acme.test"}, "email", "an email without an at sign"),
    ({"email": "12345"}, "email", "a number for the email"),
    ({"email": ["a@acme.test", "b@acme.test"]}, "email", "the email sent twice"),
    ({"email": "n" * 320 + "@acme.test"}, "email", "an over-long email"),
    ({"email": "nia\x00@acme.test"}, "email", "a NUL in the email"),
    ({"email": "nia\x07@acme.test"}, "email", "a control character in the email"),
    ({"email": "nia\n@acme.test"}, "email", "a newline in the email"),
    ({"email": "nia@acme.test", "name": "N" * 256}, "name", "an over-long name"),
    ({"email": "nia@acme.test", "name": "Ni\x00a"}, "name", "a NUL in the name"),
    ({"email": "nia@acme.test", "name": "Ni\x1b[31ma"}, "name", "an escape in the name"),
    ({"email": "nia@acme.test", "name": ["Nia", "Nina"]}, "name", "the name sent twice"),
    ({"email": "nia@acme.test", "role": "admin"}, "role", "an unknown role"),
    ({"email": "nia@acme.test", "role": "0"}, "role", "a number for the role"),
    ({"email": "nia@acme.test", "role": ["staff", "owner"]}, "role", "the role sent twice"),
    ({"email": "nia@acme.test", "role": "owner\x00"}, "role", "a NUL in the role"),
    ({"email": "nia@acme.test", "role": "o" * 1000}, "role", "an over-long role"),
]


@pytest.mark.parametrize("form, field, _", BAD_TEAMMATE_FORMS, ids=[case[2] for case in BAD_TEAMMATE_FORMS])
def test_a_bad_teammate_form_is_refused_beside_its_field_and_adds_no_one(client, owner, form, field, _):
    before = snapshot()
    response = client.post("/console/teammates", data={"csrf_token": owner, **form})
    assert_page(response, 400)
    assert f'id="{field}-error"' in page_text(response)
    assert snapshot() == before


def test_every_bad_teammate_field_is_shown_at_once(client, owner):
    form = {"csrf_token": owner, "email": "nope", "name": "N" * 300, "role": "admin"}
    html = page_text(client.post("/console/teammates", data=form))
    assert all(f'id="{name}-error"' in html for name in ("email", "name", "role"))


def test_an_owner_changes_a_role_in_force_at_the_next_page(app, client, owner):
    staff = app.test_client()
    sign_in_as(staff, *STAFF[:2])
    assert_page(staff.get("/console/keys"), 403)
    promoted = client.post(
        f"/console/teammates/{user_id(STAFF[0])}/role", data={"csrf_token": owner, "role": "owner"}
    )
    assert promoted.status_code == 303 and promoted.headers["Location"] == "/console/teammates?done=role"
    assert User.get(User.email == STAFF[0]).role == "owner"
    assert staff.get("/console/keys").status_code == 200
    demoted = client.post(
        f"/console/teammates/{user_id(STAFF[0])}/role", data={"csrf_token": owner, "role": "staff"}
    )
    assert demoted.status_code == 303 and User.get(User.email == STAFF[0]).role == "staff"
    assert_page(staff.get("/console/keys"), 403)


@pytest.mark.parametrize(
    "role",
    ["admin", "", "staff\x00", "s" * 300, ["staff", "owner"]],
    ids=["an unknown role", "an empty role", "a NUL", "an over-long role", "the role sent twice"],
)
def test_a_bad_role_change_is_refused_beside_that_row(client, owner, role):
    before = snapshot()
    staff_id = user_id(STAFF[0])
    response = client.post(f"/console/teammates/{staff_id}/role", data={"csrf_token": owner, "role": role})
    if role == "":  # an empty choice keeps the current role: nothing to refuse, nothing changed
        assert response.status_code == 303
    else:
        assert_page(response, 400)
        assert f'id="role-{staff_id}-error"' in page_text(response)
    assert snapshot() == before


def test_the_last_active_owner_can_neither_demote_nor_disable_themself(client, owner):
    before = snapshot()
    me = user_id(OWNER[0])
    refused = client.post(f"/console/teammates/{me}/role", data={"csrf_token": owner, "role": "staff"})
    assert_page(refused, 409)
    assert f'id="role-{me}-error"' in page_text(refused) and "last active owner" in page_text(refused)
    disabled = client.post(f"/console/teammates/{me}/disable", data={"csrf_token": owner})
    assert_page(disabled, 409)
    assert "last active owner" in page_text(disabled)
    assert snapshot() == before and client.get("/console/keys").status_code == 200


def test_with_another_owner_an_owner_may_step_down_or_disable_themself(client, load):
    load(tenant_fixture("acme", users=users(OWNER, SECOND_OWNER)))
    sign_in_as(client, *OWNER[:2])
    csrf = csrf_token(page_text(client.get("/console/")))
    me = user_id(OWNER[0])
    stepped = client.post(f"/console/teammates/{me}/role", data={"csrf_token": csrf, "role": "staff"})
    assert stepped.status_code == 303 and stepped.headers["Location"] == "/console/"
    assert_page(client.get("/console/teammates"), 403)
    sign_in_as(client, *SECOND_OWNER[:2])
    csrf = csrf_token(page_text(client.get("/console/")))
    # the second owner is now the last one: it cannot leave, but can disable the first
    assert_page(
        client.post(f"/console/teammates/{user_id(SECOND_OWNER[0])}/disable", data={"csrf_token": csrf}), 409
    )
    client.post(f"/console/teammates/{me}/role", data={"csrf_token": csrf, "role": "owner"})
    gone = client.post(f"/console/teammates/{user_id(SECOND_OWNER[0])}/disable", data={"csrf_token": csrf})
    assert gone.status_code == 303 and "reason=account_ended" in gone.headers["Location"]
    assert User.get(User.email == SECOND_OWNER[0]).disabled
    assert client.get("/console/").status_code == 303  # signed out with the rest of its sessions


def test_a_disabled_teammates_session_ends_and_they_cannot_sign_in(app, client, owner):
    staff = app.test_client()
    sign_in_as(staff, *STAFF[:2])
    assert staff.get("/console/inbox").status_code == 200
    staff_id = user_id(STAFF[0])
    confirm = client.get(f"/console/teammates/{staff_id}/disable")
    assert_page(confirm, 200)
    assert not User.get_by_id(staff_id).disabled  # a GET asks
    done = client.post(f"/console/teammates/{staff_id}/disable", data={"csrf_token": owner})
    assert done.status_code == 303 and done.headers["Location"] == "/console/teammates?done=disabled"
    assert User.get_by_id(staff_id).disabled
    assert ConsoleSession.select().where(ConsoleSession.user == staff_id).count() == 0
    gone = staff.get("/console/inbox")
    assert gone.status_code == 303 and "reason=signed_out" in gone.headers["Location"]
    assert sign_in_as(app.test_client(), *STAFF[:2]).status_code == 401
    assert "no (disabled)" in page_text(client.get("/console/teammates"))


@pytest.mark.parametrize("action", ["role", "disable"])
def test_another_shops_teammate_is_a_404_page_and_unchanged(client, owner, action):
    before = snapshot()
    gail = user_id(GLOBEX_OWNER[0])
    for target in (gail, 999999):
        path = f"/console/teammates/{target}/{action}"
        assert_page(client.post(path, data={"csrf_token": owner, "role": "staff"}), 404)
        if action == "disable":
            assert_page(client.get(path), 404)
    assert_page(client.post(f"/console/teammates/x%00/{action}", data={"csrf_token": owner}), 400)
    assert snapshot() == before


# ---- one domain function for both faces ------------------------------------------------------------


def test_the_cli_sets_a_role_through_the_same_function(runner, shop):
    result = runner.invoke(
        args=["shop", "user", "set-role", "--tenant", "acme", "--email", STAFF[0], "--role", "owner"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"tenant": "acme", "email": STAFF[0], "role": "owner"}
    assert User.get(User.email == STAFF[0]).role == "owner"
    other = runner.invoke(
        args=["shop", "user", "set-role", "--tenant", "globex", "--email", STAFF[0], "--role", "staff"]
    )
    assert other.exit_code == 1 and User.get(User.email == STAFF[0]).role == "owner"


def test_the_cli_refuses_a_bad_teammate_name_as_the_console_does(runner, shop):
    result = runner.invoke(
        args=["shop", "user", "create", "--tenant", "acme", "--email", "n@acme.test", "--name", "a\x1bb"]
    )
    assert result.exit_code == 1 and "control characters" in result.output
    assert not User.select().where(User.email == "n@acme.test").exists()


# ---- logs --------------------------------------------------------------------------------------------


def test_no_token_password_or_hash_reaches_a_log_line(client, owner, caplog):
    caplog.set_level(logging.DEBUG)
    _, token = make_key(client, owner)
    made = ApiKey.get(ApiKey.id != "key_acme", ApiKey.tenant == "acme")
    client.post(f"/console/keys/{made.id}/revoke", data={"csrf_token": owner})
    client.get("/api/v1/me", headers=auth_headers(token))
    added = client.post("/console/teammates", data={"csrf_token": owner, "email": "nia@acme.test"})
    password = SHOWN_ONCE.search(page_text(added)).group(1)
    nia = User.get(User.email == "nia@acme.test")
    client.post(f"/console/teammates/{nia.id}/role", data={"csrf_token": owner, "role": "owner"})
    client.post(f"/console/teammates/{nia.id}/disable", data={"csrf_token": owner})
    client.post("/console/teammates", data={"csrf_token": owner, "email": "bad\x00@acme.test"})
    secrets = (token, made.token_hash, password, nia.password_hash, OWNER[1], TOKEN, owner)
    written = []
    for record in caplog.records:
        RedactSecrets().filter(record)  # what every handler of the service does before it writes a line
        written.append(record.getMessage())
    assert not [line for line in written for secret in secrets if secret in line]
    assert any("[redacted-digest]" in line for line in written)  # peewee's DEBUG lines held the rows


def test_the_nav_runs_in_the_order_a_shop_works_in(client, owner):
    html = page_text(client.get("/console/"))
    nav = html.split("<nav")[1].split("</nav>")[0]
    shown = re.findall(r'href="(/console/[^"]*)"', nav)
    expected = [
        "/console/",
        "/console/board",
        "/console/calendar",
        "/console/customers",
        "/console/leads",
        "/console/estimates",
        "/console/invoices",
        "/console/conversations",
        "/console/inbox",
        "/console/webhooks",
        "/console/keys",
        "/console/teammates",
        "/console/settings/appointments",
    ]
    assert [path for path in shown if path in expected] == expected

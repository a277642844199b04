"""The notifications inbox: lists, count, retrieval, flags, archive-read, scopes and visibility."""

import json

import pytest

from shop import clock
from shop.models import Event, Notification
from tests.helpers import assert_error, auth_headers, tenant_fixture

BASE = "/api/v1/notifications"
OLD = "2026-11-01T10:00:00.000Z"


def note(id_, minute, **fields):
    """A fixture notification created at 10:<minute> on 2026-11-01."""
    return {"id": id_, "created_at": f"2026-11-01T10:{minute:02d}:00.000Z", **fields}


INBOX = [
    note(50, 0, type="new_ticket", message="New ticket 1001", ticket_id="1001", details={"priority": "high"}),
    note(51, 1, ticket_id="1001", read=True),
    note(52, 2, message="no ticket"),
    note(53, 3, ticket_id="1002"),  # hidden ticket
    note(54, 4, ticket_id="1003", read=True),  # deleted ticket
    note(55, 5, archived=True, archived_at="2026-11-02T00:00:00.000Z"),
    note(56, 6, scope="user", user_email="sam@acme.test", type="mention", ticket_id="1001"),
    note(57, 7, scope="user", user_email="kim@acme.test", read=True),
    note(58, 8, scope="user", user_email="sam@acme.test", ticket_id="1002"),  # hidden ticket
]


@pytest.fixture
def shop(load):
    """acme: tickets 1001 (visible), 1002 (hidden), 1003 (deleted) and the INBOX; globex: one of its own."""
    users = [{"id": 7, "email": "Sam@Acme.test"}, {"id": 8, "email": "kim@acme.test"}]
    tickets = [{"id": "1001"}, {"id": "1002", "hidden": True}, {"id": "1003", "deleted": True}]
    load(
        tenant_fixture("acme", users=users, tickets=tickets, notifications=INBOX),
        tenant_fixture(
            "globex",
            users=[{"id": 9, "email": "sam@acme.test"}],
            tickets=[{"id": "2001"}],
            notifications=[note(90, 9), note(91, 9, scope="user", user_email="sam@acme.test")],
        ),
    )
    return auth_headers("sk_test_acme_token_0001")


def ids(response):
    assert response.status_code == 200, response.get_data(as_text=True)
    return [item["id"] for item in response.get_json()["data"]]


def flags():
    """Every notification's flags, to show that a refused request changed nothing."""
    return {n.id: (n.read, n.archived, n.archived_at) for n in Notification.select()}


# lists


def test_the_list_is_the_visible_active_global_inbox_newest_first(client, shop):
    body = client.get(BASE, headers=shop).get_json()
    assert [n["id"] for n in body["data"]] == [52, 51, 50]
    assert body["object"] == "list" and body["has_more"] is False and body["next_cursor"] is None
    assert body["data"][2] == {
        "object": "notification",
        "id": 50,
        "scope": "global",
        "type": "new_ticket",
        "message": "New ticket 1001",
        "ticket_id": "1001",
        "from_email": None,
        "read": False,
        "archived": False,
        "archived_at": None,
        "details": {"priority": "high"},
        "created_at": OLD,
    }


def test_unread_keeps_only_unread_rows(client, shop):
    assert ids(client.get(f"{BASE}?unread=true", headers=shop)) == [52, 50]


def test_archived_lists_the_archive(client, shop):
    body = client.get(f"{BASE}?archived=true", headers=shop).get_json()
    assert [n["id"] for n in body["data"]] == [55]
    assert body["data"][0]["archived_at"] == "2026-11-02T00:00:00.000Z" and body["data"][0]["read"] is True


def test_unread_is_ignored_when_archived_is_true(client, shop):
    client.post(f"{BASE}/50/archive", headers=shop)
    client.post(f"{BASE}/50/unread", headers=shop)
    assert ids(client.get(f"{BASE}?archived=true&unread=true", headers=shop)) == [55, 50]
    assert ids(client.get(f"{BASE}?archived=true&unread=false", headers=shop)) == [55, 50]


@pytest.mark.parametrize(
    "true, false", [("true", "false"), ("1", "0"), ("TRUE", "False")], ids=["words", "digits", "any case"]
)
def test_boolean_spellings_are_the_same_everywhere(client, shop, true, false):
    assert ids(client.get(f"{BASE}?unread={true}&archived={false}", headers=shop)) == [52, 50]
    assert ids(client.get(f"{BASE}?unread={false}&archived={false}", headers=shop)) == [52, 51, 50]
    assert ids(client.get(f"{BASE}?archived={true}", headers=shop)) == [55]


def test_pages_walk_the_inbox_newest_first_without_gaps_or_repeats(client, load):
    same_minute = [note(100 + i, i // 3, read=i % 2 == 0) for i in range(20)]
    hidden = [note(200 + i, i, ticket_id="1002") for i in range(10)]
    load(tenant_fixture("acme", tickets=[{"id": "1002", "hidden": True}], notifications=same_minute + hidden))
    headers = auth_headers("sk_test_acme_token_0001")
    seen, cursor = [], None
    for _ in range(10):
        query = f"{BASE}?limit=6" + (f"&cursor={cursor}" if cursor else "")
        body = client.get(query, headers=headers).get_json()
        seen += [(n["created_at"], n["id"]) for n in body["data"]]
        cursor = body["next_cursor"]
        assert (cursor is not None) == body["has_more"]
        if not cursor:
            break
    assert seen == sorted(seen, reverse=True)
    assert sorted(i for _, i in seen) == list(range(100, 120))


def test_a_cursor_is_bound_to_its_filters(client, load):
    load(tenant_fixture("acme", notifications=[note(100 + i, i) for i in range(5)]))
    headers = auth_headers("sk_test_acme_token_0001")
    cursor = client.get(f"{BASE}?limit=2", headers=headers).get_json()["next_cursor"]
    assert ids(client.get(f"{BASE}?limit=2&cursor={cursor}", headers=headers)) == [102, 101]
    assert_error(
        client.get(f"{BASE}?unread=true&cursor={cursor}", headers=headers), 400, "invalid_cursor", "cursor"
    )


# count


def test_count_is_the_exact_number_of_visible_unread_active_rows(client, shop):
    body = client.get(f"{BASE}/count", headers=shop).get_json()
    assert body == {"object": "notification_count", "scope": "global", "unread": 2}


def test_count_follows_every_flag_change(client, shop):
    def unread():
        return client.get(f"{BASE}/count", headers=shop).get_json()["unread"]

    client.post(f"{BASE}/52/read", headers=shop)
    assert unread() == 1
    client.post(f"{BASE}/51/unread", headers=shop)
    assert unread() == 2
    client.post(f"{BASE}/51/archive", headers=shop)
    assert unread() == 1
    client.post(f"{BASE}/55/unread", headers=shop)  # unread but archived: not in the active inbox
    assert unread() == 1


def test_count_of_a_teammate(client, shop):
    body = client.get(f"{BASE}/count?scope=user&user_email=sam@acme.test", headers=shop).get_json()
    assert body == {"object": "notification_count", "scope": "user", "unread": 1}


# user scope


def test_user_scope_lists_only_that_teammate_matching_email_case_insensitively(client, shop):
    assert ids(client.get(f"{BASE}?scope=user&user_email=SAM@acme.TEST", headers=shop)) == [56]
    assert ids(client.get(f"{BASE}?scope=user&user_email=kim@acme.test", headers=shop)) == [57]
    body = client.get(f"{BASE}?scope=user&user_email=sam@acme.test", headers=shop).get_json()
    assert body["data"][0]["scope"] == "user" and "user_email" not in body["data"][0]


def test_an_unknown_teammate_has_an_empty_inbox(client, shop):
    assert ids(client.get(f"{BASE}?scope=user&user_email=nobody@acme.test", headers=shop)) == []
    count = client.get(f"{BASE}/count?scope=user&user_email=nobody@acme.test", headers=shop).get_json()
    assert count["unread"] == 0


def test_global_scope_ignores_user_email(client, shop):
    assert ids(client.get(f"{BASE}?user_email=sam@acme.test", headers=shop)) == [52, 51, 50]


# retrieval


def test_retrieve_a_global_notification(client, shop):
    body = client.get(f"{BASE}/52", headers=shop).get_json()
    assert body["id"] == 52 and body["object"] == "notification" and body["ticket_id"] is None


@pytest.mark.parametrize(
    "query",
    ["", "?scope=global", "?scope=user&user_email=kim@acme.test", "?user_email=sam@acme.test"],
    ids=["no scope", "global scope", "another teammate", "email without scope=user"],
)
def test_a_user_row_needs_scope_user_and_its_teammate(client, shop, query):
    assert_error(client.get(f"{BASE}/56{query}", headers=shop), 404, "not_found", "id")


def test_a_user_row_is_retrieved_with_its_teammate(client, shop):
    body = client.get(f"{BASE}/56?scope=user&user_email=sam@ACME.test", headers=shop).get_json()
    assert body["id"] == 56 and body["scope"] == "user"


def test_a_global_row_is_still_reachable_with_scope_user(client, shop):
    assert client.get(f"{BASE}/52?scope=user&user_email=sam@acme.test", headers=shop).status_code == 200


SAM = "scope=user&user_email=sam@acme.test"


@pytest.mark.parametrize(
    "path",
    [f"{BASE}/53", f"{BASE}/54", f"{BASE}/58?{SAM}", f"{BASE}/90", f"{BASE}/91?{SAM}", f"{BASE}/999"],
    ids=[
        "tied to a hidden ticket",
        "tied to a deleted ticket",
        "a user row tied to a hidden ticket",
        "another tenant's",
        "another tenant's user row",
        "absent",
    ],
)
def test_invisible_notifications_are_404(client, shop, path):
    assert_error(client.get(path, headers=shop), 404, "not_found", "id")


# flags


def test_read_and_unread(client, shop):
    assert client.post(f"{BASE}/50/read", headers=shop).get_json()["read"] is True
    assert Notification.get_by_id(50).read is True
    body = client.post(f"{BASE}/50/unread", headers=shop).get_json()
    assert body["read"] is False and body["archived"] is False and body["id"] == 50
    assert Notification.get_by_id(50).read is False


def test_archive_sets_archived_archived_at_and_read(client, shop):
    body = client.post(f"{BASE}/50/archive", headers=shop).get_json()
    assert body["archived"] is True and body["read"] is True
    assert body["archived_at"] == clock.isoformat(Notification.get_by_id(50).archived_at)
    assert 50 not in ids(client.get(BASE, headers=shop))
    assert 50 in ids(client.get(f"{BASE}?archived=true", headers=shop))


def test_archiving_again_keeps_the_first_archived_at(client, shop):
    first = client.post(f"{BASE}/50/archive", headers=shop).get_json()["archived_at"]
    clock.advance(60)
    again = client.post(f"{BASE}/50/archive", headers=shop).get_json()
    assert again["archived_at"] == first and again["archived"] is True


def test_unarchive_returns_to_the_active_inbox_still_read(client, shop):
    client.post(f"{BASE}/50/archive", headers=shop)
    body = client.post(f"{BASE}/50/unarchive", headers=shop).get_json()
    assert body["archived"] is False and body["archived_at"] is None and body["read"] is True
    assert ids(client.get(BASE, headers=shop)) == [52, 51, 50]


def test_unarchive_keeps_an_unread_mark_made_in_the_archive(client, shop):
    client.post(f"{BASE}/55/unread", headers=shop)
    body = client.post(f"{BASE}/55/unarchive", headers=shop).get_json()
    assert body["read"] is False and body["archived"] is False


@pytest.mark.parametrize("action", ["read", "unread", "archive", "unarchive"])
def test_writes_on_user_rows_are_refused(client, shop, action):
    before = flags()
    assert_error(client.post(f"{BASE}/56/{action}", headers=shop), 403, "user_scope_read_only", "id")
    assert flags() == before and Event.select().count() == 0


@pytest.mark.parametrize("action", ["read", "unread", "archive", "unarchive"])
@pytest.mark.parametrize(
    "target",
    [53, 54, 58, 90, 999],
    ids=["hidden ticket", "deleted ticket", "user row of a hidden ticket", "another tenant", "absent"],
)
def test_writes_on_invisible_rows_are_404(client, shop, action, target):
    before = flags()
    assert_error(client.post(f"{BASE}/{target}/{action}", headers=shop), 404, "not_found", "id")
    assert flags() == before


# archive-read


def test_archive_read_archives_the_read_visible_global_rows(client, shop):
    body = client.post(f"{BASE}/archive-read", headers=shop).get_json()
    assert body == {
        "object": "notification_archive_result",
        "scope": "global",
        "cleared_all": False,
        "archived_count": 1,
    }
    archived = Notification.get_by_id(51)
    assert archived.archived and archived.archived_at is not None
    assert ids(client.get(BASE, headers=shop)) == [52, 50]
    untouched = [54, 56, 57]  # read, but tied to a deleted ticket or user-scoped
    assert not any(Notification.get_by_id(i).archived for i in untouched)


@pytest.mark.parametrize("flag", ["true", "1", "TRUE"])
def test_archive_read_with_all_archives_unread_rows_too(client, shop, flag):
    body = client.post(f"{BASE}/archive-read?all={flag}", headers=shop).get_json()
    assert body["cleared_all"] is True and body["archived_count"] == 3
    assert ids(client.get(BASE, headers=shop)) == []
    assert all(Notification.get_by_id(i).read for i in (50, 52))
    assert not Notification.get_by_id(53).archived  # hidden ticket: not part of the visible set
    assert client.get(f"{BASE}/count", headers=shop).get_json()["unread"] == 0


@pytest.mark.parametrize("flag", ["false", "0"])
def test_archive_read_with_all_false_is_the_default(client, shop, flag):
    body = client.post(f"{BASE}/archive-read?all={flag}", headers=shop).get_json()
    assert body["cleared_all"] is False and body["archived_count"] == 1


def test_archive_read_twice_archives_nothing_the_second_time(client, shop):
    client.post(f"{BASE}/archive-read", headers=shop)
    assert client.post(f"{BASE}/archive-read", headers=shop).get_json()["archived_count"] == 0


def test_an_idempotent_retry_of_archive_read_replays_the_count(client, shop):
    headers = {**shop, "Idempotency-Key": "archive-read-1"}
    first = client.post(f"{BASE}/archive-read?all=true", headers=headers)
    client.post(f"{BASE}/50/unarchive", headers=shop)
    again = client.post(f"{BASE}/archive-read?all=true", headers=headers)
    assert again.get_json() == first.get_json() and again.headers["Idempotent-Replayed"] == "true"
    assert not Notification.get_by_id(50).archived


# visibility changes


@pytest.mark.parametrize("kind", ["ticket.hidden", "ticket.deleted"])
def test_a_ticket_becomes_hidden_and_its_notifications_vanish_at_once(client, shop, runner, kind):
    assert ids(client.get(BASE, headers=shop)) == [52, 51, 50]
    assert client.get(f"{BASE}/count", headers=shop).get_json()["unread"] == 2
    result = runner.invoke(args=["shop", "activity", kind, "--tenant", "acme", "--data", '{"id": "1001"}'])
    assert result.exit_code == 0, result.output
    assert ids(client.get(BASE, headers=shop)) == [52]
    assert ids(client.get(f"{BASE}?scope=user&user_email=sam@acme.test", headers=shop)) == []
    assert client.get(f"{BASE}/count", headers=shop).get_json()["unread"] == 1
    assert_error(client.get(f"{BASE}/50", headers=shop), 404, "not_found", "id")
    assert_error(client.post(f"{BASE}/51/archive", headers=shop), 404, "not_found", "id")
    body = client.post(f"{BASE}/archive-read?all=true", headers=shop).get_json()
    assert body["archived_count"] == 1  # only 52: 50 and 51 belong to the now hidden ticket
    assert not Notification.get_by_id(50).archived and not Notification.get_by_id(51).archived


# access


@pytest.mark.parametrize(
    "method, path, scope",
    [
        ("GET", BASE, "notifications.read"),
        ("GET", f"{BASE}/count", "notifications.read"),
        ("GET", f"{BASE}/50", "notifications.read"),
        ("POST", f"{BASE}/50/read", "notifications.write"),
        ("POST", f"{BASE}/50/archive", "notifications.write"),
        ("POST", f"{BASE}/archive-read", "notifications.write"),
    ],
    ids=["list", "count", "retrieve", "read", "archive", "archive-read"],
)
def test_each_endpoint_needs_its_scope(client, load, method, path, scope):
    other = "notifications.write" if scope == "notifications.read" else "notifications.read"
    load(tenant_fixture("acme", scopes=[other], notifications=[note(50, 0)]))
    error = assert_error(
        client.open(path, method=method, headers=auth_headers("sk_test_acme_token_0001")),
        403,
        "insufficient_scope",
    )
    assert error["details"]["required_scope"] == scope
    assert not Notification.get_by_id(50).read


def test_another_tenant_sees_only_its_own_inbox(client, shop):
    globex = auth_headers("sk_test_globex_token_0001")
    assert ids(client.get(BASE, headers=globex)) == [90]
    assert ids(client.get(f"{BASE}?scope=user&user_email=sam@acme.test", headers=globex)) == [91]
    assert_error(client.post(f"{BASE}/50/read", headers=globex), 404, "not_found", "id")


# bad input: (id, method, path, body, status, code, param)
LONG_EMAIL = "a" * 320 + "@acme.test"
BAD = [
    ("list: scope is not global or user", "GET", f"{BASE}?scope=team", None, 400, "invalid_scope", "scope"),
    ("list: scope in capitals", "GET", f"{BASE}?scope=GLOBAL", None, 400, "invalid_scope", "scope"),
    ("list: empty scope", "GET", f"{BASE}?scope=", None, 400, "invalid_scope", "scope"),
    ("list: scope as an array", "GET", f"{BASE}?scope[]=user", None, 400, "invalid_query", "scope"),
    ("list: scope repeated", "GET", f"{BASE}?scope=user&scope=user", None, 400, "invalid_query", "scope"),
    (
        "list: scope user without email",
        "GET",
        f"{BASE}?scope=user",
        None,
        400,
        "missing_user_email",
        "user_email",
    ),
    (
        "list: scope user with an empty email",
        "GET",
        f"{BASE}?scope=user&user_email=",
        None,
        400,
        "missing_user_email",
        "user_email",
    ),
    (
        "list: user_email as an object",
        "GET",
        f"{BASE}?scope=user&user_email[a]=x",
        None,
        400,
        "invalid_query",
        "user_email",
    ),
    (
        "list: user_email too long",
        "GET",
        f"{BASE}?scope=user&user_email={LONG_EMAIL}",
        None,
        400,
        "invalid_query",
        "user_email",
    ),
    ("list: unread yes", "GET", f"{BASE}?unread=yes", None, 400, "invalid_query", "unread"),
    ("list: unread empty", "GET", f"{BASE}?unread=", None, 400, "invalid_query", "unread"),
    ("list: unread as an array", "GET", f"{BASE}?unread[]=true", None, 400, "invalid_query", "unread"),
    ("list: archived 2", "GET", f"{BASE}?archived=2", None, 400, "invalid_query", "archived"),
    ("list: archived as an object", "GET", f"{BASE}?archived[x]=1", None, 400, "invalid_query", "archived"),
    (
        "list: a bad unread is refused even when archived is true",
        "GET",
        f"{BASE}?archived=true&unread=no",
        None,
        400,
        "invalid_query",
        "unread",
    ),
    ("list: limit 0", "GET", f"{BASE}?limit=0", None, 400, "invalid_query", "limit"),
    ("list: limit 101", "GET", f"{BASE}?limit=101", None, 400, "invalid_query", "limit"),
    ("list: limit not a number", "GET", f"{BASE}?limit=ten", None, 400, "invalid_query", "limit"),
    ("list: cursor garbage", "GET", f"{BASE}?cursor=abc.def", None, 400, "invalid_cursor", "cursor"),
    ("list: cursor as an array", "GET", f"{BASE}?cursor[]=abc", None, 400, "invalid_cursor", "cursor"),
    ("count: bad scope", "GET", f"{BASE}/count?scope=all", None, 400, "invalid_scope", "scope"),
    (
        "count: scope user without email",
        "GET",
        f"{BASE}/count?scope=user",
        None,
        400,
        "missing_user_email",
        "user_email",
    ),
    ("count: scope as an array", "GET", f"{BASE}/count?scope[]=global", None, 400, "invalid_query", "scope"),
    ("retrieve: id not a number", "GET", f"{BASE}/abc", None, 400, "invalid_id", "id"),
    ("retrieve: id zero", "GET", f"{BASE}/0", None, 400, "invalid_id", "id"),
    ("retrieve: id negative", "GET", f"{BASE}/-1", None, 400, "invalid_id", "id"),
    ("retrieve: id a decimal", "GET", f"{BASE}/1.5", None, 400, "invalid_id", "id"),
    ("retrieve: id beyond 32 bits", "GET", f"{BASE}/2147483648", None, 400, "invalid_id", "id"),
    ("retrieve: bad scope", "GET", f"{BASE}/50?scope=team", None, 400, "invalid_scope", "scope"),
    (
        "retrieve: scope user without email",
        "GET",
        f"{BASE}/56?scope=user",
        None,
        400,
        "missing_user_email",
        "user_email",
    ),
    ("read: id not a number", "POST", f"{BASE}/abc/read", None, 400, "invalid_id", "id"),
    ("archive: id beyond 32 bits", "POST", f"{BASE}/99999999999/archive", None, 400, "invalid_id", "id"),
    ("read: a body field", "POST", f"{BASE}/50/read", {"read": True}, 400, "invalid_field", "read"),
    ("archive: a body that is not an object", "POST", f"{BASE}/50/archive", [1], 400, "invalid_json", None),
    ("archive: a form body", "POST", f"{BASE}/50/archive", "a=1", 415, "unsupported_media_type", None),
    ("archive-read: all yes", "POST", f"{BASE}/archive-read?all=yes", None, 400, "invalid_query", "all"),
    ("archive-read: all empty", "POST", f"{BASE}/archive-read?all=", None, 400, "invalid_query", "all"),
    (
        "archive-read: all as an array",
        "POST",
        f"{BASE}/archive-read?all[]=true",
        None,
        400,
        "invalid_query",
        "all",
    ),
    (
        "archive-read: all as an object",
        "POST",
        f"{BASE}/archive-read?all[x]=true",
        None,
        400,
        "invalid_query",
        "all",
    ),
    (
        "archive-read: all repeated",
        "POST",
        f"{BASE}/archive-read?all=1&all=1",
        None,
        400,
        "invalid_query",
        "all",
    ),
    (
        "archive-read: all sent in the body",
        "POST",
        f"{BASE}/archive-read",
        {"all": True},
        400,
        "invalid_field",
        "all",
    ),
    ("archive-read: GET", "GET", f"{BASE}/archive-read", None, 405, "method_not_allowed", None),
    ("count: POST", "POST", f"{BASE}/count", None, 405, "method_not_allowed", None),
    ("list: DELETE", "DELETE", BASE, None, 405, "method_not_allowed", None),
    ("retrieve: PATCH", "PATCH", f"{BASE}/50", {"read": True}, 405, "method_not_allowed", None),
    ("unknown flag", "POST", f"{BASE}/50/star", None, 404, "not_found", None),
]


@pytest.mark.parametrize(
    "method, path, body, status, code, param", [case[1:] for case in BAD], ids=[case[0] for case in BAD]
)
def test_bad_input_gets_the_spec_error_and_changes_nothing(
    client, shop, method, path, body, status, code, param
):
    before = flags()
    data, content_type = (
        (body, "application/x-www-form-urlencoded")
        if isinstance(body, str)
        else (None if body is None else json.dumps(body), "application/json")
    )
    response = client.open(path, method=method, data=data, content_type=content_type, headers=shop)
    assert_error(response, status, code, param)
    assert flags() == before and Event.select().count() == 0


def test_unknown_query_parameters_are_refused(client, shop):
    """Issue 23, item 9: `?read=false` used to answer as if absent."""
    for url, name in ((f"{BASE}?read=false", "read"), (f"{BASE}/50/read?scope=user", "scope")):
        method = client.get if "read?" not in url else client.post
        error = method(url, headers=shop).get_json()["error"]
        assert (error["code"], error["param"]) == ("invalid_query", name)


def test_an_empty_json_object_body_is_accepted(client, shop):
    assert client.post(f"{BASE}/50/read", json={}, headers=shop).status_code == 200


def test_the_demo_shop_fills_the_inbox(client):
    from importlib import resources

    from shop.domain.fixtures import load_fixture

    load_fixture(json.loads(resources.files("shop").joinpath("demo/demo_shop.json").read_text()))
    headers = auth_headers("sk_test_acme_demo_0001")
    assert ids(client.get(BASE, headers=headers)) == [55, 52, 50]  # 53: hidden ticket 1003; 54: archived
    assert ids(client.get(f"{BASE}?archived=true", headers=headers)) == [54]
    assert client.get(f"{BASE}/count", headers=headers).get_json()["unread"] == 2
    assert ids(client.get(f"{BASE}?scope=user&user_email=sam@acme.test", headers=headers)) == [51]

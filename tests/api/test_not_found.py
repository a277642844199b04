"""Every 404 of the API: `param` names what the request named (the path's record `id`, a second
record in the path or a body field by its own name, null for an unknown route), the message is
`No <kind> <id>.`, and another shop's record answers the very bytes a missing one does."""

import re

import pytest

from tests.helpers import assert_error, auth_headers, tenant_fixture
from tests.helpers.appointments import BASE, BOOKING, HOLDS, NEW, set_clock
from tests.helpers.webhooks import URL

ACME = auth_headers("sk_test_acme_token_0001")
GLOBEX = auth_headers("sk_test_globex_token_0001")
ACME_SUB = "whsub_" + "a" * 24
GLOBEX_SUB = "whsub_" + "b" * 24
NO_SUB = "whsub_" + "0" * 24
NO_DELIVERY = "whd_" + "0" * 24
NO_HOLD = "hold_" + "0" * 24
WEBHOOK = f"/api/v1/webhooks/{NO_SUB}"
DELIVERY = f"/api/v1/webhooks/{ACME_SUB}/deliveries/{NO_DELIVERY}"
SINCE = {"since": "2026-01-01T00:00:00Z"}
TUESDAY = "2026-12-01"
ROUTE = "No such route."


def shop_of(tenant: str, n: int) -> dict:
    """A shop whose records all carry ids of tenant number n (1 acme, 2 globex)."""
    message = {"id": 100 * n, "channel": "sms", "direction": "inbound", "body": "Ready?"}
    return tenant_fixture(
        tenant,
        booking={**BOOKING, "hold_minutes": 15},
        customers=[{"id": n, "display_name": "Ann", "email": f"ann{n}@example.com", "sms_consent": True}],
        tickets=[
            {"id": f"{n}001", "customer_id": n},
            {"id": f"{n}002", "customer_id": n, "billing_only": True},
            {"id": f"{n}003", "customer_id": n, "hidden": True},
            {"id": f"{n}004", "customer_id": n, "deleted": True},
        ],
        conversations=[{"id": 10 * n, "customer_id": n, "messages": [message]}],
        notifications=[{"id": 50 + n, "scope": "global", "type": "new_ticket", "message": "New"}],
        appointments=[{**NEW, "id": 100 * n + 100, "scheduled_date": TUESDAY, "ticket_id": f"{n}001"}],
        webhook_subscriptions=[{"id": "whsub_" + "ab"[n - 1] * 24, "url": URL, "events": ["*"]}],
    )


@pytest.fixture
def shops(client, load):
    """Acme and Globex, each with a record of every kind; Globex's delivery and slot hold."""
    set_clock("2026-11-25T12:00:00")
    load(shop_of("acme", 1), shop_of("globex", 2))
    ping = client.post(f"/api/v1/webhooks/{GLOBEX_SUB}/ping", headers=GLOBEX)
    hold = client.post(HOLDS, json={"date": TUESDAY, "time": "11:00"}, headers=GLOBEX)
    assert ping.status_code == 202 and hold.status_code == 201, (ping.get_json(), hold.get_json())
    return {"delivery": ping.get_json()["id"], "hold": hold.get_json()["id"]}


def row(sentence, method, path, body, param, message, headers=None):
    return pytest.param(method, path, body, param, message, headers or {}, id=sentence)


ROTATE = {"Idempotency-Key": "rotate-key-0001"}
BOOK = {**NEW, "scheduled_date": TUESDAY}
NOT_FOUND = [
    # the record the path names: param "id"
    row(
        "a missing conversation",
        "GET",
        "/api/v1/messages/conversations/99",
        None,
        "id",
        "No conversation 99.",
    ),
    row(
        "the messages of a missing conversation",
        "GET",
        "/api/v1/messages/conversations/99/messages",
        None,
        "id",
        "No conversation 99.",
    ),
    row("a missing message", "GET", "/api/v1/messages/999", None, "id", "No message 999."),
    row("a missing appointment", "GET", f"{BASE}/999", None, "id", "No appointment 999."),
    row(
        "a patch of a missing appointment",
        "PATCH",
        f"{BASE}/999",
        {"notes": "x"},
        "id",
        "No appointment 999.",
    ),
    row("a cancel of a missing appointment", "POST", f"{BASE}/999/cancel", None, "id", "No appointment 999."),
    row(
        "a complete of a missing appointment",
        "POST",
        f"{BASE}/999/complete",
        None,
        "id",
        "No appointment 999.",
    ),
    row(
        "a no_show of a missing appointment", "POST", f"{BASE}/999/no_show", None, "id", "No appointment 999."
    ),
    row(
        "a link_ticket of a missing appointment",
        "POST",
        f"{BASE}/999/link_ticket",
        {"ticket_id": "1001"},
        "id",
        "No appointment 999.",
    ),
    row(
        "a release of a missing hold", "DELETE", f"{HOLDS}/{NO_HOLD}", None, "id", f"No slot hold {NO_HOLD}."
    ),
    row("a missing notification", "GET", "/api/v1/notifications/99", None, "id", "No notification 99."),
    *[
        row(
            f"a {flag} of a missing notification",
            "POST",
            f"/api/v1/notifications/99/{flag}",
            None,
            "id",
            "No notification 99.",
        )
        for flag in ("read", "unread", "archive", "unarchive")
    ],
    *[
        row(sentence, method, f"{WEBHOOK}{suffix}", body, "id", f"No webhook subscription {NO_SUB}.", headers)
        for sentence, method, suffix, body, headers in [
            ("a missing subscription", "GET", "", None, None),
            ("a patch of a missing subscription", "PATCH", "", {"enabled": False}, None),
            ("a delete of a missing subscription", "DELETE", "", None, None),
            ("a rotation of a missing subscription", "POST", "/rotate_secret", None, ROTATE),
            ("a ping of a missing subscription", "POST", "/ping", None, None),
            ("the deliveries of a missing subscription", "GET", "/deliveries", None, None),
            ("the delivery summary of a missing subscription", "GET", "/deliveries/summary", None, None),
            ("a delivery of a missing subscription", "GET", f"/deliveries/{NO_DELIVERY}", None, None),
            (
                "a redeliver on a missing subscription",
                "POST",
                f"/deliveries/{NO_DELIVERY}/redeliver",
                None,
                None,
            ),
            ("a recover of a missing subscription", "POST", "/recover", SINCE, None),
            ("the stats of a missing subscription", "GET", "/stats", None, None),
        ]
    ],
    # a second record in the path: its own parameter's name
    row("a missing delivery", "GET", DELIVERY, None, "delivery_id", f"No webhook delivery {NO_DELIVERY}."),
    row(
        "the attempts of a missing delivery",
        "GET",
        f"{DELIVERY}/attempts",
        None,
        "delivery_id",
        f"No webhook delivery {NO_DELIVERY}.",
    ),
    row(
        "a redeliver of a missing delivery",
        "POST",
        f"{DELIVERY}/redeliver",
        None,
        "delivery_id",
        f"No webhook delivery {NO_DELIVERY}.",
    ),
    # a record a body field names: that field
    row(
        "a send on a missing ticket",
        "POST",
        "/api/v1/messages/send",
        {"ticket_id": "9999", "channel": "sms", "content": "Hi", "to": "+15555550100"},
        "ticket_id",
        "No ticket 9999.",
    ),
    row(
        "a send on a hidden ticket",
        "POST",
        "/api/v1/messages/send",
        {"ticket_id": "1003", "channel": "email", "body": "Hi"},
        "ticket_id",
        "No ticket 1003.",
    ),
    row(
        "a booking on a missing ticket",
        "POST",
        BASE,
        {**BOOK, "ticket_id": "9999"},
        "ticket_id",
        "No ticket 9999.",
    ),
    row(
        "a booking with a missing hold",
        "POST",
        BASE,
        {**BOOK, "hold_id": NO_HOLD},
        "hold_id",
        f"No slot hold {NO_HOLD}.",
    ),
    row(
        "a patch to a deleted ticket",
        "PATCH",
        f"{BASE}/200",
        {"ticket_id": "1004"},
        "ticket_id",
        "No ticket 1004.",
    ),
    row(
        "a link to a ticket given as a number",
        "POST",
        f"{BASE}/200/link_ticket",
        {"ticket_id": 9999},
        "ticket_id",
        "No ticket 9999.",
    ),
    row(
        "a link to a billing-only ticket",
        "POST",
        f"{BASE}/200/link_ticket",
        {"ticket_id": "1002"},
        "ticket_id",
        "No ticket 1002.",
    ),
    # the records' own API (issue 24)
    row("a missing customer", "GET", "/api/v1/customers/999999", None, "id", "No customer 999999."),
    row("another shop's customer", "PATCH", "/api/v1/customers/2", {"phone": "1"}, "id", "No customer 2."),
    row("another shop's ticket", "GET", "/api/v1/tickets/2001", None, "id", "No ticket 2001."),
    row("a hidden ticket", "GET", "/api/v1/tickets/1003", None, "id", "No ticket 1003."),
    row(
        "a patch to a deleted ticket",
        "PATCH",
        "/api/v1/tickets/1004",
        {"status": "Ready"},
        "id",
        "No ticket 1004.",
    ),
    row("a missing lead", "POST", "/api/v1/leads/999999/convert", None, "id", "No lead 999999."),
    row(
        "a ticket for a missing customer",
        "POST",
        "/api/v1/tickets",
        {"subject": "S", "customer_id": "999999"},
        "customer_id",
        "No customer 999999.",
    ),
    # no route at all: param null
    row("an unknown route", "GET", "/api/v1/nope", None, None, ROUTE),
    row("an unknown notification flag", "POST", "/api/v1/notifications/51/star", None, None, ROUTE),
    row("a customer's unknown action", "POST", "/api/v1/customers/1/merge", None, None, ROUTE),
    row("an asset the reference page does not load", "GET", "/api/v1/docs/assets/nope.js", None, None, ROUTE),
    row("the metrics while they are off", "GET", "/metrics", None, None, ROUTE),
]


@pytest.mark.parametrize(("method", "path", "body", "param", "message", "headers"), NOT_FOUND)
def test_every_404_names_its_param_and_says_no_kind_id(
    client, shops, method, path, body, param, message, headers
):
    response = client.open(path, method=method, json=body, headers={**ACME, **headers})
    error = assert_error(response, 404, "not_found", param)
    assert error["type"] == "not_found_error" and error["details"] is None
    assert error["message"] == message


def masked(response) -> bytes:
    """The response's body with its request id (the one part that differs per request) blanked."""
    assert response.status_code == 404
    return re.sub(rb"req_[0-9a-f]{24}", b"req_", response.get_data())


# (sentence, method, path template, body template): {id} is Globex's record or a missing one
THEIRS = [
    ("a conversation", "GET", "/api/v1/messages/conversations/{id}", None, "20", "99"),
    ("a conversation's messages", "GET", "/api/v1/messages/conversations/{id}/messages", None, "20", "99"),
    ("a message", "GET", "/api/v1/messages/{id}", None, "200", "999"),
    (
        "a send on a ticket",
        "POST",
        "/api/v1/messages/send",
        {"ticket_id": "{id}", "channel": "email", "body": "x"},
        "2001",
        "9999",
    ),
    ("an appointment", "GET", f"{BASE}/{{id}}", None, "300", "999"),
    ("a patch of an appointment", "PATCH", f"{BASE}/{{id}}", {"notes": "x"}, "300", "999"),
    ("a cancel of an appointment", "POST", f"{BASE}/{{id}}/cancel", None, "300", "999"),
    ("a link to a ticket", "POST", f"{BASE}/200/link_ticket", {"ticket_id": "{id}"}, "2001", "9999"),
    ("a booking on a ticket", "POST", BASE, {**BOOK, "ticket_id": "{id}"}, "2001", "9999"),
    ("a notification", "GET", "/api/v1/notifications/{id}", None, "52", "99"),
    ("an archive of a notification", "POST", "/api/v1/notifications/{id}/archive", None, "52", "99"),
    ("a subscription", "GET", "/api/v1/webhooks/{id}", None, GLOBEX_SUB, NO_SUB),
    ("a delete of a subscription", "DELETE", "/api/v1/webhooks/{id}", None, GLOBEX_SUB, NO_SUB),
    ("a ping of a subscription", "POST", "/api/v1/webhooks/{id}/ping", None, GLOBEX_SUB, NO_SUB),
    ("a recover of a subscription", "POST", "/api/v1/webhooks/{id}/recover", SINCE, GLOBEX_SUB, NO_SUB),
    ("a subscription's stats", "GET", "/api/v1/webhooks/{id}/stats", None, GLOBEX_SUB, NO_SUB),
]
# Globex's delivery and hold ids are made when the test runs: "delivery" and "hold" name them
THEIRS += [
    ("a delivery", "GET", f"/api/v1/webhooks/{ACME_SUB}/deliveries/{{id}}", None, "delivery", NO_DELIVERY),
    (
        "a delivery's attempts",
        "GET",
        f"/api/v1/webhooks/{ACME_SUB}/deliveries/{{id}}/attempts",
        None,
        "delivery",
        NO_DELIVERY,
    ),
    (
        "a redeliver",
        "POST",
        f"/api/v1/webhooks/{ACME_SUB}/deliveries/{{id}}/redeliver",
        None,
        "delivery",
        NO_DELIVERY,
    ),
    ("a release of a hold", "DELETE", f"{HOLDS}/{{id}}", None, "hold", NO_HOLD),
    (
        "a booking with a hold",
        "POST",
        BASE,
        {**BOOK, "scheduled_time": "11:00", "hold_id": "{id}"},
        "hold",
        NO_HOLD,
    ),
]


def fill(template, record_id):
    if isinstance(template, dict):
        return {name: fill(value, record_id) for name, value in template.items()}
    return template.replace("{id}", record_id) if isinstance(template, str) else template


@pytest.mark.parametrize(
    ("method", "path", "body", "theirs", "missing"),
    [pytest.param(*case[1:], id=f"another shop's {case[0]} is a missing one") for case in THEIRS],
)
def test_another_shops_record_answers_the_bytes_of_a_missing_one(
    client, shops, method, path, body, theirs, missing
):
    theirs = shops.get(theirs, theirs)
    answers = [
        client.open(fill(path, record_id), method=method, json=fill(body, record_id), headers=ACME)
        for record_id in (theirs, missing)
    ]
    assert theirs.encode() in answers[0].get_data()
    assert masked(answers[0]).replace(theirs.encode(), missing.encode()) == masked(answers[1])


def test_the_document_says_which_param_a_404_names(client):
    paths = client.get("/api/v1/openapi.json").get_json()["paths"]
    examples = {
        (method, path): answer["content"]["application/json"].get("example")
        for path, item in paths.items()
        for method, operation in item.items()
        if isinstance(operation, dict) and (answer := operation.get("responses", {}).get("404"))
    }
    assert examples[("get", "/api/v1/appointments/{id}")]["error"]["param"] == "id"
    assert examples[("get", "/api/v1/messages/{message_id}")]["error"]["param"] == "id"
    assert examples[("get", "/metrics")]["error"]["param"] is None  # off: the unknown route's 404
    described = {
        ("get", "/api/v1/webhooks/{id}/deliveries/{delivery_id}"): "(param delivery_id)",
        ("post", "/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver"): "(param delivery_id)",
        ("get", "/api/v1/webhooks/{id}/deliveries/{delivery_id}/attempts"): "(param delivery_id)",
        ("patch", "/api/v1/appointments/{id}"): "(param ticket_id)",
        ("post", "/api/v1/appointments/{id}/link_ticket"): "(param ticket_id)",
        ("post", "/api/v1/appointments"): "(param hold_id)",
        ("post", "/api/v1/messages/send"): "(param ticket_id)",
    }
    for (method, path), words in described.items():
        assert words in paths[path][method]["responses"]["404"]["description"]

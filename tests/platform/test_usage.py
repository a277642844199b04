"""GET /api/v1/usage: what is logged, the rollup, lenient parameters, timeouts, unreadable log."""

import pytest

from shop import clock
from shop.db import db
from shop.models import UsageLog
from tests.helpers import assert_error, auth_headers, logged_rows, tenant_fixture


def log_request(created_ms: int, status: int = 200, duration_ms: int = 1) -> None:
    """One usage row of acme's key, as the request pipeline writes it."""
    UsageLog.create(
        tenant_id="acme",
        api_key_id="key_acme",
        method="GET",
        path="/x",
        status=status,
        duration_ms=duration_ms,
        created_ms=created_ms,
    )


def usage(client, headers, query=""):
    """The report; by default its window ends a minute from now, so requests made in the same
    millisecond as the report (the end is exclusive) still count."""
    if "until" not in query:
        query += ("&" if query else "?") + f"until={clock.epoch_ms() + 60_000}"
    response = client.get(f"/api/v1/usage{query}", headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def test_no_logged_requests_gives_zero_counts(client, acme):
    body = usage(client, acme)
    assert body["object"] == "api_usage" and body["tenant_id"] == "acme"
    assert body["total_requests"] == 0 and body["error_count"] == 0 and body["error_rate"] == 0
    assert body["by_status_class"] == {"2xx": 0, "4xx": 0, "5xx": 0, "other": 0}
    assert body["duration_ms"] == {"total": 0, "avg": 0, "max": 0}
    assert body["distinct_keys"] == 0
    assert body["window"]["since"].endswith("Z") and body["window"]["until"].endswith("Z")
    assert "by_key" not in body


def test_what_is_logged_and_what_is_not(client, acme):
    client.get("/api/v1/me", headers=acme)  # successful read: logged
    client.get("/api/v1/customers?limit=0", headers=acme)  # 400 after auth: logged
    client.post("/api/v1/_probe", json={"display_name": "A"}, headers=acme)  # write: logged
    client.post("/api/v1/_probe", json={}, headers=acme)  # failed write: logged
    client.get("/api/v1/me")  # 401: not logged
    client.post("/api/v1/_probe", data="x", content_type="text/plain", headers=acme)  # 415: not logged
    client.get("/api/v1/health")  # discovery: not logged
    client.get("/api/v1/openapi.json", headers=acme)  # discovery: not logged
    body = usage(client, acme)
    assert body["total_requests"] == 4
    assert body["by_status_class"] == {"2xx": 2, "4xx": 2, "5xx": 0, "other": 0}
    assert body["error_count"] == 2 and body["error_rate"] == 0.5
    assert body["distinct_keys"] == 1
    # the usage request itself is logged once it has answered
    assert sorted(r.method for r in logged_rows()) == ["GET", "GET", "GET", "POST", "POST"]


def test_5xx_and_other_classes_are_counted(client, acme):
    client.post("/api/v1/_probe", json={"display_name": "A", "fail": "crash"}, headers=acme)
    log_request(clock.epoch_ms(), status=304, duration_ms=3)
    body = usage(client, acme)
    assert body["by_status_class"] == {"2xx": 0, "4xx": 0, "5xx": 1, "other": 1}
    assert body["error_count"] == 1 and body["error_rate"] == 0.5


def test_durations_and_rounding(client, acme):
    now = clock.epoch_ms()
    for status, ms in [(200, 10), (200, 11), (404, 30)]:
        log_request(now - 1000, status=status, duration_ms=ms)
    body = usage(client, acme, "?by_key=true")
    assert body["duration_ms"] == {"total": 51, "avg": 17, "max": 30}
    assert body["error_rate"] == round(1 / 3, 4)
    assert body["by_key"] == [
        {
            "api_key_id": "key_acme",
            "total_requests": 3,
            "error_count": 1,
            "error_rate": 0.3333,
            "avg_duration_ms": 17,
        }
    ]


def test_only_the_calling_key_is_reported(client, load):
    tenant = tenant_fixture("acme")
    tenant["api_keys"].append({"id": "key_acme_2", "token": "sk_test_acme_second_01", "scopes": []})
    load(tenant)
    first, second = auth_headers("sk_test_acme_token_0001"), auth_headers("sk_test_acme_second_01")
    for _ in range(3):
        client.get("/api/v1/me", headers=second)
    body = usage(client, first, "?by_key=1")
    assert body["total_requests"] == 0 and body["by_key"] == []
    body = usage(client, second, "?by_key=1")
    assert body["total_requests"] == 3
    assert [entry["api_key_id"] for entry in body["by_key"]] == ["key_acme_2"]


def test_window_bounds_since_inclusive_until_exclusive(client, acme):
    for ms in (1_000, 2_000, 3_000):
        log_request(ms)
    body = usage(client, acme, "?since=1000&until=3000")
    assert body["total_requests"] == 2
    assert body["window"] == {"since": "1970-01-01T00:00:01.000Z", "until": "1970-01-01T00:00:03.000Z"}


def test_window_days_ends_at_until(client, acme):
    day = 86_400_000
    until = 100 * day
    for ms in (until - 3 * day, until - day // 2):
        log_request(ms)
    assert usage(client, acme, f"?until={until}&window_days=1")["total_requests"] == 1
    assert usage(client, acme, f"?until={until}&window_days=7")["total_requests"] == 2
    # since overrides window_days
    assert usage(client, acme, f"?until={until}&window_days=1&since=0")["total_requests"] == 2


@pytest.mark.parametrize(
    "query",
    [
        "?window_days=abc",
        "?window_days=-3",
        "?window_days=0",
        "?window_days=1.5",
        "?since=yesterday",
        "?until=soon",
        "?by_key=maybe",
        "?limit=lots",
        "?limit=-1",
        "?window_days[]=3",
        "?since=1&since=2",
        "?until=99999999999999999999999",
        "?by_key[x]=1",
    ],
    ids=lambda q: f"malformed {q}",
)
def test_malformed_parameters_fall_back_to_defaults(client, acme, query):
    body = usage(client, acme, query)
    assert body["object"] == "api_usage"
    assert body["window"]["since"] is not None


@pytest.mark.parametrize(
    "query",
    [
        "?window_days=%C2%B2",
        "?since=%C2%B2",
        "?until=-%C2%B2",
        "?limit=%C2%B2&by_key=true",
        "?window_days=%D9%A1",
        "?window_days=-%C2%B9",
    ],
    ids=[
        "superscript window_days",
        "superscript since",
        "negative superscript until",
        "superscript limit",
        "arabic-indic window_days",
        "negative superscript window_days",
    ],
)
def test_non_ascii_digits_are_malformed_and_fall_back_to_defaults(client, acme, query):
    # "\u00b2".isdigit() is true but int() refuses it: this was a 500
    body = usage(client, acme, query)
    assert body["object"] == "api_usage"
    assert body["window"]["since"] is not None


def test_default_window_is_30_days(client, acme):
    body = client.get("/api/v1/usage", headers=acme).get_json()
    from datetime import datetime

    since = datetime.fromisoformat(body["window"]["since"].rstrip("Z"))
    until = datetime.fromisoformat(body["window"]["until"].rstrip("Z"))
    assert (until - since).days == 30


def test_rollup_over_its_time_budget_is_504(client, app, acme, monkeypatch):
    now = clock.epoch_ms()
    UsageLog.insert_many(
        [
            {
                "tenant_id": "acme",
                "api_key_id": "key_acme",
                "method": "GET",
                "path": "/x",
                "status": 200,
                "duration_ms": 1,
                "created_ms": now - i,
            }
            for i in range(1, 2001)
        ]
    ).execute()
    assert usage(client, acme)["total_requests"] == 2000
    monkeypatch.setitem(app.config, "USAGE_TIME_BUDGET_MS", 0)
    response = client.get("/api/v1/usage", headers=acme)
    error = assert_error(response, 504, "api_usage_timeout")
    assert error["type"] == "request_timeout_error"


def test_unreadable_log_gives_zero_counts_and_null_bounds(client, acme):
    client.get("/api/v1/me", headers=acme)
    db.execute_sql("ALTER TABLE usage_log RENAME TO usage_log_away")
    try:
        response = client.get("/api/v1/usage", headers=acme)
    finally:
        db.execute_sql("ALTER TABLE usage_log_away RENAME TO usage_log")
    assert response.status_code == 200
    body = response.get_json()
    assert body["window"] == {"since": None, "until": None}
    assert body["total_requests"] == 0


def test_prune_drops_rows_past_retention(acme):
    from datetime import timedelta

    from shop.domain.retention import prune_usage

    now = clock.epoch_ms()
    for age_days in (1, 89, 91):
        log_request(now - age_days * 86_400_000)
    assert sum(prune_usage(timedelta(days=90), 1000)) == 1
    assert logged_rows().count() == 2


def test_logged_rows_reach_the_database_without_a_report(client, acme):
    import time

    client.get("/api/v1/me", headers=acme)
    deadline = time.monotonic() + 5
    while UsageLog.select().count() == 0 and time.monotonic() < deadline:
        time.sleep(0.02)  # the background writer flushes every 0.1 s
    assert UsageLog.select().count() == 1


def test_rows_are_written_as_given_whatever_their_characters(acme):
    # on PostgreSQL a batch goes in as one COPY, whose text format escapes tabs, newlines and
    # backslashes: each must come back as it was buffered, and the batch commit as one
    from shop.platform import usage_log

    paths = ["/v1/a\tb", "/v1/line\nbreak", "/v1/back\\slash", "/v1/\\N", "/v1/é€😀", "'\""]
    for n, path in enumerate(paths):
        usage_log.buffer.add(
            {
                "tenant": "acme",
                "key": "key_acme",
                "method": "GET",
                "path": path,
                "status": 200 + n,
                "duration": n,
                "created": 1_700_000_000_000 + n,
            }
        )
    rows = sorted(logged_rows(), key=lambda row: row.created_ms)
    assert [(row.path, row.status, row.duration_ms) for row in rows] == [
        (path, 200 + n, n) for n, path in enumerate(paths)
    ]
    assert all(row.tenant_id == "acme" and row.api_key_id == "key_acme" for row in rows)

"""Console sign-in: the session cookie, the API's key gates on every request, CSRF, the usage log."""

from datetime import timedelta

import pytest

from shop import clock
from shop.models import ApiKey, ConsoleSession, Tenant
from tests.helpers import logged_rows, tenant_fixture
from tests.helpers.console import csrf_token, page_text, sign_in
from tests.helpers.processes import wait_until

TOKEN = "sk_test_acme_token_0001"


@pytest.fixture
def acme_shop(load):
    load(tenant_fixture("acme"))


def test_sign_in_sets_a_strict_http_only_cookie_that_holds_no_key(client, acme_shop):
    form = client.get("/console/sign-in")
    response = client.post(
        "/console/sign-in", data={"csrf_token": csrf_token(page_text(form)), "api_key": TOKEN}
    )
    assert response.status_code == 303 and response.headers["Location"] == "/console/"
    cookie = next(c for c in response.headers.getlist("Set-Cookie") if c.startswith("shop_console="))
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/console/" in cookie
    assert TOKEN not in cookie and "Secure" not in cookie  # plain http here: Secure only over HTTPS
    stored = ConsoleSession.get()
    assert stored.api_key_id == "key_acme" and stored.id != cookie.split("=", 1)[1].split(";")[0]
    overview = client.get("/console/")
    assert overview.status_code == 200 and "<h1>Overview</h1>" in page_text(overview)
    assert "default-src 'none'" in overview.headers["Content-Security-Policy"]
    assert overview.headers["Cache-Control"] == "no-store"


def test_sign_in_over_https_marks_the_cookie_secure(client, acme_shop):
    form = client.get("/console/sign-in", base_url="https://localhost")
    response = client.post(
        "/console/sign-in",
        data={"csrf_token": csrf_token(page_text(form)), "api_key": TOKEN},
        base_url="https://localhost",
    )
    assert "Secure" in next(
        c for c in response.headers.getlist("Set-Cookie") if c.startswith("shop_console=")
    )


def test_pages_without_a_session_go_to_the_sign_in_form(client, acme_shop):
    response = client.get("/console/webhooks")
    assert response.status_code == 303
    assert response.headers["Location"] == "/console/sign-in?reason=signed_out&next=/console/webhooks"
    refused = client.post("/console/inbox/archive-read", data={})
    assert refused.status_code == 401 and "signed out" in page_text(refused)


def test_a_wrong_key_is_refused_and_counts_toward_the_address_limit(client, acme_shop, app, monkeypatch):
    monkeypatch.setitem(app.config, "AUTH_FAILURES_PER_MINUTE", 3)
    token = csrf_token(page_text(client.get("/console/sign-in")))
    for _ in range(3):
        response = client.post("/console/sign-in", data={"csrf_token": token, "api_key": "sk_test_wrong"})
        assert response.status_code == 401 and "not valid" in page_text(response)
    blocked = client.post("/console/sign-in", data={"csrf_token": token, "api_key": TOKEN})
    assert blocked.status_code == 429 and "Retry-After" in blocked.headers
    api = client.get("/api/v1/me", headers={"Authorization": f"Bearer {TOKEN}"})
    assert api.status_code == 429  # the same per-address tally as the API's
    assert ConsoleSession.select().count() == 0


def test_sign_in_without_the_form_token_is_refused(client, acme_shop):
    client.get("/console/sign-in")
    response = client.post("/console/sign-in", data={"api_key": TOKEN})
    assert response.status_code == 403 and "csrf_failed" in page_text(response)
    assert ConsoleSession.select().count() == 0


def test_a_post_without_the_session_csrf_token_is_refused_and_changes_nothing(client, load):
    load(tenant_fixture("acme", notifications=[{"id": 50, "scope": "global", "type": "x", "message": "Hi"}]))
    sign_in(client, TOKEN)
    for data in ({"notification_id": "50"}, {"notification_id": "50", "csrf_token": "forged"}):
        response = client.post("/console/inbox/archive", data=data)
        assert response.status_code == 403 and "csrf_failed" in page_text(response)
    assert "1 unread" in page_text(client.get("/console/inbox"))


def test_sign_out_ends_the_session(client, acme_shop):
    token = sign_in(client, TOKEN)
    response = client.post("/console/sign-out", data={"csrf_token": token})
    assert response.status_code == 303 and ConsoleSession.select().count() == 0
    assert client.get("/console/").status_code == 303


def test_a_session_idle_for_12_hours_has_ended(client, acme_shop):
    sign_in(client, TOKEN)
    clock.advance(11 * 3600)
    assert client.get("/console/").status_code == 200  # use refreshes the idle clock
    clock.advance(11 * 3600)
    assert client.get("/console/").status_code == 200
    clock.advance(12 * 3600 + 1)
    assert client.get("/console/").status_code == 303
    assert ConsoleSession.select().count() == 0


@pytest.mark.parametrize(
    "change, status",
    [
        pytest.param(lambda: ApiKey.update(revoked=True).execute(), 303, id="a revoked key ends the session"),
        pytest.param(
            lambda: ApiKey.update(expires_at=clock.now() - timedelta(seconds=1)).execute(),
            303,
            id="an expired key ends the session",
        ),
        pytest.param(lambda: Tenant.update(suspended=True).execute(), 503, id="a suspended tenant sees 503"),
        pytest.param(
            lambda: Tenant.update(plan="starter").execute(), 402, id="a plan without API access sees 402"
        ),
        pytest.param(
            lambda: Tenant.update(billing_status="past_due").execute(), 402, id="an unpaid tenant sees 402"
        ),
    ],
)
def test_every_request_passes_the_api_s_key_and_tenant_gates(client, acme_shop, change, status):
    sign_in(client, TOKEN)
    change()
    response = client.get("/console/")
    assert response.status_code == status
    if status == 303:
        assert "reason=key_ended" in response.headers["Location"]
        assert ConsoleSession.select().count() == 0
    else:
        assert "text/html" in response.content_type and "Traceback" not in page_text(response)


def test_console_requests_are_in_the_usage_log_like_api_calls(client, acme_shop):
    token = sign_in(client, TOKEN)
    client.get("/console/inbox")
    client.post("/console/inbox/archive-read", data={"csrf_token": token})
    expected = {
        ("POST", "/console/sign-in", 303, "key_acme"),
        ("GET", "/console/inbox", 200, "key_acme"),
        ("POST", "/console/inbox/archive-read", 303, "key_acme"),
    }
    # the background writer may hold a batch mid-commit when this test flushes: look until it lands
    wait_until(lambda: expected <= {(r.method, r.path, r.status, r.api_key_id) for r in logged_rows()}, 10)
    # the API's own report counts them: every row of the key so far (sign-in, overview, inbox,
    # archive-read); its window ends a minute ahead so a row of this very millisecond still counts
    logged = [row for row in logged_rows() if row.api_key_id == "key_acme"]
    report = f"/api/v1/usage?until={clock.epoch_ms() + 60_000}"
    usage = client.get(report, headers={"Authorization": f"Bearer {TOKEN}"}).get_json()
    assert usage["total_requests"] == len(logged) >= 4


def test_the_overview_draws_the_key_s_week_and_open_problems(client, load):
    load(tenant_fixture("acme", appointments=[_appointment("2020-01-06")]))
    sign_in(client, TOKEN)
    html = page_text(client.get("/console/"))
    assert html.count('<svg class="chart') == 3
    assert "Requests per day" in html and "Error rate" in html and "p95 latency" in html
    assert "Overdue appointments (1)" in html and "Dead deliveries (0)" in html


def _appointment(day: str) -> dict:
    return {
        "id": 200,
        "customer_name": "Ann Lee",
        "customer_phone": "+15555550100",
        "service_description": "Screen",
        "scheduled_date": day,
        "scheduled_time": "10:00",
        "duration_minutes": 60,
        "status": "scheduled",
    }

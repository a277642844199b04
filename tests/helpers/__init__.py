"""Helpers the tests share: fixture tenants, auth headers, the usage log, the spec's error body."""

from pathlib import Path

from shop.models import UsageLog
from shop.platform import usage_log

# DESIGN.md's own example fixture (its // comments stripped), as a new user would load it
DESIGN_FIXTURE = Path(__file__).resolve().parents[1] / "data" / "design_fixture.json"

ALL_SCOPES = [
    "messages.read",
    "messages.write",
    "appointments.read",
    "appointments.write",
    "notifications.read",
    "notifications.write",
    "webhooks.read",
    "webhooks.write",
    "webhooks.manage",
    "customers.read",
    "tickets.read",
    "invoices.read",
    "invoices.write",
    "estimates.read",
    "estimates.write",
    "payments.read",
    "payments.write",
    "leads.read",
    "customers.write",
    "tickets.write",
    "leads.write",
]

ERROR_KEYS = {"type", "code", "message", "param", "details", "request_id"}


def tenant_fixture(tenant_id: str = "acme", scopes=None, token: str | None = None, **fields) -> dict:
    """A fixture tenant with one key holding `scopes` (all scopes by default)."""
    key = {
        "id": f"key_{tenant_id}",
        "token": token or f"sk_test_{tenant_id}_token_0001",
        "mode": "test",
        "scopes": ALL_SCOPES if scopes is None else scopes,
    }
    tenant = {"id": tenant_id, "name": tenant_id.title(), "timezone": "America/New_York", "api_keys": [key]}
    tenant.update(fields)
    return tenant


def auth_headers(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def assert_error(response, status, code, param=None):
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    error = response.get_json()["error"]
    assert set(error) == ERROR_KEYS
    assert error["code"] == code
    assert error["param"] == param
    assert error["request_id"] == response.headers["X-Request-Id"]
    return error


def logged_rows():
    """The usage log as the database holds it, once this process's buffer is written."""
    usage_log.buffer.flush()
    return UsageLog.select()

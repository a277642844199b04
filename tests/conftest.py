"""Test harness: one real SQLite file per run, the real app, and helpers to load tenants."""

import os
import shutil
import tempfile

# the app and the Huey consumer read these at import: set them before anything imports shop
_RUN_DIR = tempfile.mkdtemp(prefix="shop-tests-")
os.environ["SHOP_INSTANCE_PATH"] = _RUN_DIR
os.environ["SHOP_DATABASE"] = os.path.join(_RUN_DIR, "shop.sqlite3")
os.environ["SHOP_SECRET_KEY"] = "test-secret-key-not-for-production"

import pytest  # noqa: E402

from shop import clock, create_app  # noqa: E402
from shop.db import db  # noqa: E402
from shop.domain.fixtures import load_fixture  # noqa: E402
from shop.models import ALL_MODELS, UsageLog  # noqa: E402
from shop.platform import usage_log  # noqa: E402
from tasks import huey  # noqa: E402,F401  (creates the queue tables in the run's file)
from tests.probe import register_probe  # noqa: E402

ALL_SCOPES = [
    "messages.read", "messages.write", "appointments.read", "appointments.write",
    "notifications.read", "notifications.write", "webhooks.read", "webhooks.write",
    "webhooks.manage", "customers.read", "tickets.read", "invoices.read", "estimates.read",
    "payments.read", "leads.read",
]


@pytest.fixture(scope="session")
def app():
    app = create_app({"TESTING": True})
    register_probe(app)
    yield app
    db.close()
    shutil.rmtree(_RUN_DIR, ignore_errors=True)


@pytest.fixture(autouse=True)
def clean_state(app):
    """Every test starts from empty tables and the real clock."""
    yield
    clock.reset()
    usage_log.buffer.flush()
    with db.atomic():
        for model in reversed(ALL_MODELS):
            model.delete().execute()
        for table in ("task", "schedule", "kv"):
            db.execute_sql(f"DELETE FROM {table}")


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


def tenant_fixture(tenant_id: str = "acme", scopes=None, token: str | None = None, **fields) -> dict:
    """A fixture tenant with one key holding `scopes` (all scopes by default)."""
    key = {"id": f"key_{tenant_id}", "token": token or f"sk_test_{tenant_id}_token_0001",
           "mode": "test", "scopes": ALL_SCOPES if scopes is None else scopes}
    tenant = {"id": tenant_id, "name": tenant_id.title(), "timezone": "America/New_York",
              "api_keys": [key]}
    tenant.update(fields)
    return tenant


@pytest.fixture
def load():
    """Load fixture tenants; returns the load summary."""

    def _load(*tenants):
        return load_fixture({"tenants": list(tenants)})

    return _load


@pytest.fixture
def acme(load):
    """A pro tenant 'acme' with an all-scopes key; returns its auth headers."""
    load(tenant_fixture("acme"))
    return auth_headers("sk_test_acme_token_0001")


def auth_headers(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def logged_rows():
    """The usage log as the database holds it, once this process's buffer is written."""
    usage_log.buffer.flush()
    return UsageLog.select()

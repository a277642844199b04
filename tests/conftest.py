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
from shop.models import ALL_MODELS  # noqa: E402
from shop.platform import usage_log  # noqa: E402
from tasks import huey  # noqa: E402,F401  (creates the queue tables in the run's file)
from tests.helpers import ALL_SCOPES, auth_headers, logged_rows, tenant_fixture  # noqa: E402,F401
from tests.helpers.probe import register_probe  # noqa: E402


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

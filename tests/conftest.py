"""Test harness: the whole suite once per backend (a real SQLite file, then a throwaway PostgreSQL
database where a server answers), the real app, and helpers to load tenants."""

import os
import shutil
import tempfile

# the app and the Huey consumer read these at import: set them before anything imports shop
_RUN_DIR = tempfile.mkdtemp(prefix="shop-tests-")
_SQLITE_PATH = os.path.join(_RUN_DIR, "shop.sqlite3")
os.environ["SHOP_INSTANCE_PATH"] = _RUN_DIR
os.environ["SHOP_DATABASE"] = _SQLITE_PATH
os.environ["SHOP_SECRET_KEY"] = "test-secret-key-not-for-production"
# the tests need no commit on disk before the next step; the default (on) is tested in test_config
os.environ["SHOP_DB_SYNCHRONOUS_COMMIT"] = "off"

import pytest  # noqa: E402

from shop import clock, create_app  # noqa: E402
from shop.db import db, on_postgres  # noqa: E402
from shop.domain.fixtures import load_fixture  # noqa: E402
from shop.models import ALL_MODELS  # noqa: E402
from shop.platform import usage_log  # noqa: E402
from tasks import huey  # noqa: E402  (the consumer's queue: every job registered)
from tests.helpers import ALL_SCOPES, auth_headers, backends, logged_rows, tenant_fixture  # noqa: E402,F401
from tests.helpers.probe import register_probe  # noqa: E402

pytest_collection_modifyitems = backends.note_backends
pytest_terminal_summary = backends.summarize


@pytest.fixture(scope="session", params=backends.selected())
def app(request):
    """The app on one backend; the suite runs once per backend (ids [sqlite] and [postgres])."""
    if request.param == "postgres":
        database = backends.throwaway_postgres_database(request)
    else:
        database = _SQLITE_PATH
    os.environ["SHOP_DATABASE"] = database  # what the real consumer and other processes open
    app = create_app({"TESTING": True, "DATABASE": database})
    register_probe(app)
    yield app
    usage_log.buffer.flush()
    huey.storage.close()
    db.close()
    os.environ["SHOP_DATABASE"] = _SQLITE_PATH


@pytest.fixture(autouse=True)
def backend_specific(request):
    """Tests of SQLite-only machinery (marked sqlite_only) skip in the PostgreSQL pass, and tests of
    several boxes on one PostgreSQL database (marked postgres_only) in the SQLite pass, saying why."""
    if request.node.get_closest_marker("sqlite_only") and on_postgres():
        pytest.skip("SQLite-only behaviour (the writer gate, checkpoints, the file copy): not on PostgreSQL")
    if request.node.get_closest_marker("postgres_only") and not on_postgres():
        pytest.skip(
            "PostgreSQL-only behaviour (several boxes on one database, its queue protocol): not on SQLite"
        )


def pytest_sessionfinish(session):
    shutil.rmtree(_RUN_DIR, ignore_errors=True)


@pytest.fixture(autouse=True)
def clean_state(app):
    """Every test starts from empty tables, an empty queue and the real clock."""
    yield
    clock.reset()
    usage_log.buffer.flush()
    backends.empty_tables(ALL_MODELS)
    huey.flush()


@pytest.fixture
def app_with(app):
    """Build the app on the pass's database with other settings; the queue (whose configuration
    the jobs and secretbox read outside a request) is the pass's again afterwards."""
    from shop.queue import setup

    def build(**config):
        return create_app({"TESTING": True, "DATABASE": app.config["DATABASE"], **config})

    yield build
    setup(app.config)


@pytest.fixture
def cheap_password_hashes(app, monkeypatch):
    """Teammates' passwords hashed at a test's cost (scrypt n=1024): the format and the check are
    production's, 32 MiB and a tenth of a second less per hash (modules use it with usefixtures)."""
    monkeypatch.setitem(app.config, "PASSWORD_HASH_METHOD", "scrypt:1024:8:1")


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

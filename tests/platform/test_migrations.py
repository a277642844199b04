"""Schema versions: init-db stamps, migrate upgrades a 0ff0c57 database in place on SQLite and PostgreSQL."""

import json
import os
import subprocess
import sys

import pytest
from peewee import DatabaseProxy, SqliteDatabase
from playhouse.schema_diff import diff_models

from shop import migrations
from shop.models import ALL_MODELS
from tests.helpers.migrations import (
    ROWS,
    api_reads,
    contents,
    create_old_schema,
    flask_shop,
    insert_old_rows,
    old_sqlite_file,
    throwaway_postgres,
)
from tests.helpers.processes import ROOT

HEAD = len(migrations.available())
SCRIPTS = [m.name for m in migrations.available()]


def rows_of(table: str) -> list[dict]:
    content = ROWS["tables"][table]
    return [dict(zip(content["columns"], row, strict=True)) for row in content["rows"]]


def versions(db) -> list[tuple]:
    return db.execute_sql("SELECT version, name FROM schema_version ORDER BY version").fetchall()


def schema_drift(db) -> str:
    """What differs between `db` and the models (empty when they match)."""
    with db.bind_ctx(ALL_MODELS):
        return str(diff_models(db, ALL_MODELS))


def migrate_json(database: str) -> tuple[dict, str]:
    result = flask_shop(database, "migrate")
    return json.loads(result.stdout), result.stderr


def test_scripts_are_numbered_from_one_and_the_baseline_comes_first():
    assert HEAD >= 2 and SCRIPTS[0] == "0001_baseline"
    assert [int(name[:4]) for name in SCRIPTS] == list(range(1, HEAD + 1))


def test_init_db_records_the_current_version_and_migrate_then_applies_nothing(tmp_path):
    database = str(tmp_path / "new.sqlite3")
    init = json.loads(flask_shop(database, "init-db").stdout)
    assert init["initialized"] is True and init["schema_version"] == HEAD
    db = SqliteDatabase(database)
    assert versions(db) == [(i + 1, name) for i, name in enumerate(SCRIPTS)]
    assert schema_drift(db) == ""
    for _ in range(2):  # idempotent
        result, progress = migrate_json(database)
        assert result["applied"] == [] and result["from_version"] == result["to_version"] == HEAD
        assert result["created"] is False
        assert f"nothing to apply: the database is at the current version ({HEAD})" in progress
    assert versions(db) == [(i + 1, name) for i, name in enumerate(SCRIPTS)]
    assert json.loads(flask_shop(database, "init-db").stdout)["schema_version"] == HEAD


def test_migrate_on_an_empty_database_leaves_it_at_the_current_version(tmp_path):
    database = str(tmp_path / "empty.sqlite3")
    result, _ = migrate_json(database)  # the app the command runs in creates it, as any start does
    assert result["applied"] == [] and result["to_version"] == HEAD
    assert schema_drift(SqliteDatabase(database)) == ""


def test_the_runner_creates_an_empty_database_at_the_current_version_once(tmp_path):
    db = DatabaseProxy()  # as the app's shared database may be: the runner looks behind it
    db.initialize(SqliteDatabase(str(tmp_path / "empty.sqlite3")))
    db.execute_sql("CREATE TABLE task (id INTEGER PRIMARY KEY)")  # the queue's tables are not the app's
    assert migrations.status(db, ALL_MODELS).state == "empty"
    lines = []
    assert migrations.migrate(db, ALL_MODELS, lines.append)["created"] is True
    assert lines == [f"created the database at the current version ({HEAD})"]
    assert migrations.create_current(db, ALL_MODELS) is False
    assert versions(db) == [(i + 1, name) for i, name in enumerate(SCRIPTS)]
    assert schema_drift(db) == ""


def smoke_paths() -> list[str]:
    day = rows_of("appointment")[0]["scheduled_date"]
    hooked = rows_of("webhook_delivery")[0]["subscription_id"]
    return [
        "/me",
        "/customers",
        "/messages/conversations",
        "/appointments",
        f"/appointments/slots?date={day}",
        "/notifications",
        "/notifications/count",
        "/webhooks",
        f"/webhooks/{hooked}/deliveries",
        "/usage?since=0",
    ]


def assert_rows_visible(answers: dict) -> None:
    """Every read answers 200 and shows the release's rows."""
    assert {path: status for path, (status, _) in answers.items()} == dict.fromkeys(answers, 200)
    paths = smoke_paths()
    assert answers["/me"][1]["tenant_id"] == "acme"

    def ids(path: str) -> set:
        return {str(item["id"]) for item in answers[path][1]["data"]}

    def of_acme(table: str) -> set:
        return {str(row["id"]) for row in rows_of(table) if row["tenant_id"] == "acme"}

    assert ids("/customers") == of_acme("customer")
    assert ids("/messages/conversations") == of_acme("conversation")
    assert ids("/appointments") == of_acme("appointment")
    assert ids("/webhooks") == {
        row["id"]
        for row in rows_of("webhook_subscription")
        if row["tenant_id"] == "acme" and row["deleted_at"] is None
    }
    assert ids(paths[8]) == {row["id"] for row in rows_of("webhook_delivery")}
    assert ids("/notifications")  # the key's user sees the global and its own notifications
    assert ids("/notifications") <= of_acme("notification")
    assert answers[paths[4]][1]["data"] is not None
    usage = answers["/usage?since=0"][1]
    logged = [row for row in rows_of("usage_log") if row["api_key_id"] == "key_acme_demo"]
    assert usage["total_requests"] >= len(logged) > 0


def test_a_0ff0c57_sqlite_database_is_upgraded_in_place_with_every_row(tmp_path):
    database = old_sqlite_file(tmp_path / "old.sqlite3")
    db = SqliteDatabase(str(database))
    before = contents(db)
    assert all(before.values()), "every table of the release holds rows"
    assert not db.table_exists("schema_version")

    result, progress = migrate_json(str(database))
    assert result["from_version"] == 0 and result["to_version"] == HEAD and result["created"] is False
    assert [step["name"] for step in result["applied"]] == SCRIPTS
    assert "applying 0001_baseline ..." in progress and f"applied {SCRIPTS[-1]} in" in progress

    assert contents(db) == before  # every row of every table, the queue's too, unchanged
    assert versions(db) == [(i + 1, name) for i, name in enumerate(SCRIPTS)]
    assert schema_drift(db) == ""  # the same schema as a new database of this release
    assert migrate_json(str(database))[0]["applied"] == []
    assert_rows_visible(api_reads(str(database), smoke_paths()))


REFUSE = "from shop import create_app; create_app()"
# the command the refusals name: `--app shop` works from a wheel too (a wheel has no app.py)
MIGRATE = "flask --app shop shop migrate"


def test_the_app_refuses_a_database_behind_the_current_version_until_it_is_migrated(tmp_path):
    database = str(old_sqlite_file(tmp_path / "old.sqlite3"))
    env = {"SHOP_DATABASE": database}
    served = subprocess.run(
        [sys.executable, "-c", REFUSE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )
    assert served.returncode != 0
    assert "SchemaOutOfDate" in served.stderr and MIGRATE in served.stderr
    refused = flask_shop(database, "key", "list", "--tenant", "acme", check=False)
    assert refused.returncode == 1 and MIGRATE in refused.stderr
    assert "no schema version" in refused.stderr
    consumer = subprocess.run(
        [sys.executable, "-m", "tasks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )
    assert consumer.returncode == 1 and "the consumer will not start" in consumer.stderr
    assert MIGRATE in consumer.stderr
    refused = flask_shop(database, "init-db", check=False)
    assert refused.returncode == 1 and MIGRATE in refused.stderr
    assert not SqliteDatabase(database).table_exists("schema_version")  # nothing was touched

    flask_shop(database, "migrate")
    listed = json.loads(flask_shop(database, "key", "list", "--tenant", "acme").stdout)
    assert {key["id"] for key in listed} >= {"key_acme_demo"}


def test_a_database_newer_than_the_release_is_refused_and_left_alone(tmp_path):
    database = str(tmp_path / "new.sqlite3")
    flask_shop(database, "init-db")
    db = SqliteDatabase(database)
    with db.atomic():
        db.execute_sql(
            "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
            (HEAD + 1, f"{HEAD + 1:04d}_from_the_future", "2030-01-01 00:00:00"),
        )
    for command in ("migrate", "init-db"):
        refused = flask_shop(database, command, check=False)
        assert refused.returncode == 1 and f"newer than this release knows ({HEAD})" in refused.stderr
    assert len(versions(db)) == HEAD + 1


def test_a_database_that_is_not_the_release_s_is_refused_with_what_it_lacks(tmp_path):
    database = str(tmp_path / "stranger.sqlite3")
    db = SqliteDatabase(database)
    db.execute_sql("CREATE TABLE tenant (id TEXT PRIMARY KEY)")
    refused = flask_shop(database, "migrate", check=False)
    assert refused.returncode == 1 and "rolled back" in refused.stderr
    assert "tables missing: api_key, appointment" in refused.stderr
    assert not db.table_exists("schema_version")  # the baseline's transaction left nothing


def test_two_migrations_at_once_apply_each_version_once(tmp_path):
    database = str(old_sqlite_file(tmp_path / "old.sqlite3"))
    env = {**os.environ, "SHOP_DATABASE": database}
    command = [sys.executable, "-m", "flask", "--app", "app", "shop", "migrate"]
    runs = [
        subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    results = [json.loads(run.communicate(timeout=120)[0]) for run in runs]
    assert all(run.returncode == 0 for run in runs)
    applied = sorted(step["version"] for result in results for step in result["applied"])
    assert applied == list(range(1, HEAD + 1))  # each once, by one or the other
    assert versions(SqliteDatabase(database)) == [(i + 1, name) for i, name in enumerate(SCRIPTS)]


def test_a_0ff0c57_postgres_database_is_upgraded_in_place_with_every_row():
    with throwaway_postgres() as (db, _url):
        create_old_schema(db)
        insert_old_rows(db)
        before = contents(db)
        assert all(before.values())
        lines = []
        result = migrations.migrate(db, ALL_MODELS, lines.append)
        assert result["from_version"] == 0 and result["to_version"] == HEAD
        assert [step["name"] for step in result["applied"]] == SCRIPTS and lines
        assert contents(db) == before
        assert versions(db) == [(i + 1, name) for i, name in enumerate(SCRIPTS)]
        assert schema_drift(db) == ""
        assert bucket_column_types(db) == {"tokens": "double precision", "updated_at": "double precision"}
        assert migrations.migrate(db, ALL_MODELS)["applied"] == []
        assert migrations.status(db, ALL_MODELS).problem() is None


def bucket_column_types(db) -> dict:
    """The token bucket's column types (peewee's schema diff does not compare REAL with DOUBLE)."""
    rows = db.execute_sql(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_name = 'rate_bucket' AND column_name IN ('tokens', 'updated_at')"
    )
    return dict(rows.fetchall())


def test_a_new_postgres_database_is_created_at_the_current_version():
    with throwaway_postgres() as (db, _url):
        assert migrations.status(db, ALL_MODELS).state == "empty"
        assert migrations.create_current(db, ALL_MODELS) is True
        assert migrations.create_current(db, ALL_MODELS) is False
        assert versions(db) == [(i + 1, name) for i, name in enumerate(SCRIPTS)]
        assert schema_drift(db) == ""
        assert migrations.migrate(db, ALL_MODELS) == {
            "from_version": HEAD,
            "to_version": HEAD,
            "created": False,
            "applied": [],
        }


def test_the_upgraded_postgres_database_serves_every_resource():
    from shop import db as shop_db

    if "postgres" not in open(shop_db.__file__, encoding="utf-8").read().lower():
        pytest.skip("the app does not run on PostgreSQL in this tree yet (issue 13, the backend)")
    with throwaway_postgres() as (db, url):
        create_old_schema(db)
        insert_old_rows(db)
        db.close()
        migrate_json(url)
        assert_rows_visible(api_reads(url, smoke_paths()))

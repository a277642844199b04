"""`flask shop backup DEST` and `restore SRC`: a backup taken while the API writes restores to a
database that passes its integrity check and serves every record written before the backup began;
the secret key travels with it; bad input and unsafe restores are refused with nothing changed."""

import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import requests
from flask import Config
from peewee import SqliteDatabase

from shop import backup
from shop.db import on_postgres
from shop.models import WebhookSubscription
from tests.helpers import backends
from tests.helpers.migrations import SECRET_KEY as OLD_KEY
from tests.helpers.migrations import create_old_schema, insert_old_rows
from tests.helpers.processes import ROOT, wait_until
from tests.helpers.servers import gunicorn
from tests.helpers.webhooks import create

TEST_KEY = os.environ["SHOP_SECRET_KEY"]


def shop_cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    """Run `flask --app app shop ARGS` in a process of its own."""
    argv = [sys.executable, "-m", "flask", "--app", "app", "shop", *args]
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)


@pytest.fixture
def target(request, tmp_path):
    """An environment naming a new, empty database of the pass's backend and an instance folder."""
    database = (
        backends.throwaway_postgres_database(request) if on_postgres() else str(tmp_path / "restored.sqlite3")
    )
    instance = tmp_path / "restored-instance"
    return {**os.environ, "SHOP_DATABASE": database, "SHOP_INSTANCE_PATH": str(instance)}


class Writer(threading.Thread):
    """API writes (webhook subscriptions created) one after another until stopped."""

    def __init__(self, app, headers):
        super().__init__(daemon=True)
        self.app, self.headers, self.acked, self.failures = app, headers, [], []
        self.stopping = threading.Event()

    def run(self):
        client = self.app.test_client()
        while not self.stopping.is_set():
            response = create(client, self.headers, description=f"burst {len(self.acked)}")
            if response.status_code == 201:
                self.acked.append(response.get_json()["id"])
            else:
                self.failures.append(response.status_code)

    def stop(self):
        self.stopping.set()
        self.join(timeout=30)


def test_a_backup_during_a_burst_of_writes_restores_every_record_written_before_it(
    app, acme, tmp_path, target, monkeypatch
):
    monkeypatch.setitem(app.config, "RATE_LIMIT_CAPACITY", 1_000_000)
    writer = Writer(app, acme)
    writer.start()
    wait_until(lambda: len(writer.acked) >= 20)
    before = list(writer.acked)  # acknowledged before the backup started
    taken = shop_cli(dict(os.environ), "backup", str(tmp_path / "backup"))
    written_during = len(writer.acked) - len(before)
    writer.stop()
    assert taken.returncode == 0, taken.stderr
    assert written_during > 0 and writer.failures == []  # the API kept writing while it ran
    summary = json.loads(taken.stdout)
    assert summary["backend"] == ("postgres" if on_postgres() else "sqlite")
    # progress on stderr: pg_dump's own lines, or the pages copied
    pages = r"backup: (\d+) of \1 pages \(100%\)"
    progress = r"pg_dump: dumping contents of table" if on_postgres() else pages
    assert re.search(progress, taken.stderr), taken.stderr
    assert summary["secret_key"] == {"source": "setting", "included": False}  # SHOP_SECRET_KEY is set

    restored = shop_cli(target, "restore", str(tmp_path / "backup"))
    assert restored.returncode == 0, restored.stderr
    assert json.loads(restored.stdout)["schema"] == "current"
    if not on_postgres():
        checked = sqlite3.connect(target["SHOP_DATABASE"]).execute("PRAGMA integrity_check").fetchall()
        assert checked == [("ok",)]
    # the burst's drained bucket is state of its moment, not data: the restore leaves none behind
    assert rows_in(target["SHOP_DATABASE"], "rate_bucket") == 0
    # the read-back is as many requests as the burst wrote before the backup: however many that was
    # on this machine, the server reading them back must not refuse them for their number
    readers = {**target, "SHOP_RATE_LIMIT_CAPACITY": str(10 * len(before) + 100)}
    with gunicorn(readers, tmp_path / "gunicorn.log") as base:
        for sub_id in before:
            response = requests.get(f"{base}/webhooks/{sub_id}", headers=acme, timeout=10)
            assert response.status_code == 200, (sub_id, response.text)
            assert response.json()["id"] == sub_id


def rows_in(database: str, table: str) -> int:
    """How many rows `table` holds in a database named as SHOP_DATABASE names it."""
    if database.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(database) as conn:
            return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    with sqlite3.connect(database) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_a_restore_clears_the_state_of_the_moment_and_keeps_the_data(app, acme, client, tmp_path, target):
    from shop import clock
    from shop.domain import heartbeat
    from shop.models import AuthFailure

    assert create(client, acme).status_code == 201  # a rate bucket for the key
    AuthFailure.create(ip="192.0.2.7", minute=1, count=99)
    heartbeat.beat("box:1:abcd", True, clock.now())
    assert shop_cli(dict(os.environ), "backup", str(tmp_path / "backup")).returncode == 0
    restored = shop_cli(target, "restore", str(tmp_path / "backup"))
    assert restored.returncode == 0, restored.stderr
    assert json.loads(restored.stdout)["cleared"] == ["rate_bucket", "auth_failure", "consumer_heartbeat"]
    for table in ("rate_bucket", "auth_failure", "consumer_heartbeat"):
        assert rows_in(target["SHOP_DATABASE"], table) == 0, table
    assert rows_in(target["SHOP_DATABASE"], "webhook_subscription") == 1
    assert rows_in(target["SHOP_DATABASE"], "api_key") > 0


@pytest.mark.sqlite_only
def test_writes_made_while_the_copy_runs_are_left_out_whole(app, client, acme, tmp_path):
    before = [create(client, acme).get_json()["id"] for _ in range(5)]
    during = []

    def progress(line: str) -> None:
        if not during:  # the first report comes after the first page: write while the copy runs
            during.extend(create(client, acme).get_json()["id"] for _ in range(5))

    backup.backup(tmp_path / "backup", app.config, progress, pages_per_step=1)
    copy = sqlite3.connect(tmp_path / "backup" / backup.SQLITE_FILE)
    ids = {row[0] for row in copy.execute("SELECT id FROM webhook_subscription")}
    assert copy.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert len(during) == 5 and WebhookSubscription.select().count() == 10
    assert ids == set(before)  # one snapshot: the rows of its moment, none written after


def test_the_instance_key_file_travels_with_the_backup(app, acme, tmp_path, target):
    instance = tmp_path / "instance"
    instance.mkdir()
    (instance / "secret_key").write_text(TEST_KEY)  # the key the pass's data was encrypted with
    env = {k: v for k, v in os.environ.items() if k != "SHOP_SECRET_KEY"}
    taken = shop_cli({**env, "SHOP_INSTANCE_PATH": str(instance)}, "backup", str(tmp_path / "backup"))
    assert taken.returncode == 0, taken.stderr
    assert json.loads(taken.stdout)["secret_key"] == {"source": "instance_file", "included": True}
    assert (tmp_path / "backup" / "secret_key").read_text() == TEST_KEY

    target = {k: v for k, v in target.items() if k != "SHOP_SECRET_KEY"}
    restored = shop_cli(target, "restore", str(tmp_path / "backup"))
    assert restored.returncode == 0, restored.stderr
    key_file = Path(target["SHOP_INSTANCE_PATH"]) / "secret_key"
    assert key_file.read_text() == TEST_KEY and key_file.stat().st_mode & 0o077 == 0
    # the key the app generated on its first start there is kept aside, not lost
    assert (key_file.parent / "secret_key.before-restore").read_text() != TEST_KEY


def test_a_database_holding_rows_is_replaced_only_with_force(app, acme, client, tmp_path, target):
    create(client, acme)
    assert shop_cli(dict(os.environ), "backup", str(tmp_path / "backup")).returncode == 0
    assert shop_cli(target, "restore", str(tmp_path / "backup")).returncode == 0
    again = shop_cli(target, "restore", str(tmp_path / "backup"))
    assert again.returncode == 1 and "give --force" in again.stderr
    forced = shop_cli(target, "restore", "--force", str(tmp_path / "backup"))
    assert forced.returncode == 0, forced.stderr
    assert "tenant" in json.loads(forced.stdout)["replaced_rows_in"]


@pytest.fixture
def a_backup(runner, acme, tmp_path):
    """A backup of the pass's database (with acme in it) taken in this process."""
    result = runner.invoke(args=["shop", "backup", str(tmp_path / "backup")])
    assert result.exit_code == 0, result.output
    return tmp_path / "backup"


def edit_manifest(folder: Path, **changes) -> None:
    manifest = json.loads((folder / backup.MANIFEST).read_text())
    (folder / backup.MANIFEST).write_text(json.dumps({**manifest, **changes}))


def damage_database(folder: Path) -> None:
    name = json.loads((folder / backup.MANIFEST).read_text())["database"]
    with open(folder / name, "r+b") as handle:
        handle.seek(200)
        handle.write(b"\xff" * 16)


def no_manifest(folder: Path) -> None:
    (folder / backup.MANIFEST).unlink()


def broken_manifest(folder: Path) -> None:
    (folder / backup.MANIFEST).write_text("{")


def a_path_outside(folder: Path) -> None:
    manifest = json.loads((folder / backup.MANIFEST).read_text())
    edit_manifest(folder, files={**manifest["files"], "../shop.json": "0" * 64})


def other_backend(folder: Path) -> None:
    edit_manifest(folder, backend="x")


def newer_schema(folder: Path) -> None:
    edit_manifest(folder, schema_version=999)


BAD_BACKUPS = [
    pytest.param(lambda f: None, "give --force", id="a database holding rows without --force"),
    pytest.param(damage_database, "damaged", id="a database file that does not match its digest"),
    pytest.param(no_manifest, "no manifest.json", id="a folder without a manifest"),
    pytest.param(broken_manifest, "not readable", id="a manifest that is not JSON"),
    pytest.param(a_path_outside, "names a file outside", id="a manifest naming a file outside the folder"),
    pytest.param(other_backend, "is of a x database", id="a backup of another backend"),
    pytest.param(newer_schema, "newer than this release", id="a backup of a newer schema"),
]


@pytest.mark.parametrize("spoil, message", BAD_BACKUPS)
def test_a_bad_restore_is_refused_with_nothing_changed(runner, client, acme, a_backup, spoil, message):
    spoil(a_backup)
    create(client, acme)  # a row written after the backup: a restore would lose it
    result = runner.invoke(args=["shop", "restore", str(a_backup)])
    assert result.exit_code == 1
    assert "nothing restored" in result.output and message in result.output
    assert WebhookSubscription.select().count() == 1


def test_bad_command_lines_are_refused(runner, tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("keep me")
    full = tmp_path / "full"
    full.mkdir()
    (full / "other").write_text("keep me too")
    cases = [
        (["backup"], 2, "Missing argument 'DEST'"),
        (["backup", str(a_file)], 1, "is a file"),
        (["backup", str(full)], 1, "is not empty"),
        (["backup", str(a_file / "below-a-file")], 1, "no backup taken"),
        (["backup", "--pages-per-step", "0", str(tmp_path / "new")], 2, "pages-per-step"),
        (["restore"], 2, "Missing argument 'SRC'"),
        (["restore", str(tmp_path / "missing")], 1, "there is no backup"),
        (["restore", str(a_file)], 1, "not a backup folder"),
    ]
    for args, code, message in cases:
        result = runner.invoke(args=["shop", *args])
        assert (result.exit_code, message in result.output) == (code, True), (args, result.output)
    assert a_file.read_text() == "keep me" and [p.name for p in full.iterdir()] == ["other"]
    assert not (tmp_path / "new").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no partial folder left


def test_without_pg_dump_the_exact_command_is_printed_without_the_password(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no pg_dump there
    config = Config(str(tmp_path))
    config["DATABASE"] = "postgresql://shop:s3cret-pass@db.internal:5433/shop"
    with pytest.raises(backup.BackupError) as refused:
        backup.backup(tmp_path / "backup", config, lambda line: None)
    message = str(refused.value)
    assert "pg_dump is not on PATH" in message and "s3cret" not in message
    assert (
        f"PGPASSWORD='...' pg_dump --format=custom --verbose --file {tmp_path}/backup/shop.dump "
        "--dbname postgresql://shop@db.internal:5433/shop"
    ) in message
    assert f"copy {tmp_path}/secret_key into it" in message
    assert not (tmp_path / "backup").exists()


@pytest.mark.sqlite_only
def test_a_database_of_an_older_release_is_backed_up_restored_then_migrated(tmp_path):
    old = tmp_path / "old.sqlite3"
    made = SqliteDatabase(str(old))
    create_old_schema(made)
    insert_old_rows(made)
    made.close()
    env = {**os.environ, "SHOP_DATABASE": str(old), "SHOP_SECRET_KEY": OLD_KEY}
    taken = shop_cli({**env, "SHOP_INSTANCE_PATH": str(tmp_path / "old")}, "backup", str(tmp_path / "backup"))
    assert taken.returncode == 0, taken.stderr  # a backup comes before the upgrade: it is allowed
    assert json.loads(taken.stdout)["schema_version"] == 0

    target = {
        **env,
        "SHOP_DATABASE": str(tmp_path / "new.sqlite3"),
        "SHOP_INSTANCE_PATH": str(tmp_path / "new"),
    }
    restored = shop_cli(target, "restore", str(tmp_path / "backup"))
    assert restored.returncode == 0, restored.stderr
    assert (
        "migrate" in json.loads(restored.stdout)["schema"]
    )  # restored as it was, not upgraded behind your back
    assert shop_cli(target, "key", "list", "--tenant", "acme").returncode == 1  # refused until migrated
    assert shop_cli(target, "migrate").returncode == 0
    listed = shop_cli(target, "key", "list", "--tenant", "acme")
    assert listed.returncode == 0 and json.loads(listed.stdout), listed.stderr

"""Commands run from the wrong folder (issue 23, item 8): a command that needs the shop's data
refuses a database its own start would have made, names it, and leaves nothing behind; init-db,
load, demo and migrate may make one; a re-run demo keeps the data and `--reset` starts over."""

import json
import os
import subprocess
import sys

import pytest
import requests

from tests.helpers.processes import ROOT, http_ok, stop, wait_until
from tests.helpers.receivers import free_port

pytestmark = pytest.mark.sqlite_only  # these commands open a SQLite file in a folder of their own


def folder_env() -> dict:
    """The environment of a command run from a folder, as a newcomer runs it: no instance settings."""
    unset = ("SHOP_INSTANCE_PATH", "SHOP_DATABASE", "SHOP_SECRET_KEY")
    return {key: value for key, value in os.environ.items() if key not in unset}


def shop_command(folder, *args) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "flask", "--app", "shop", "shop", *args]
    return subprocess.run(command, cwd=folder, env=folder_env(), capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "args",
    [
        ("activity", "notification", "--tenant", "acme", "--data", "{}"),
        ("key", "list", "--tenant", "acme"),
        ("user", "disable", "--tenant", "acme", "--email", "sam@acme.test"),
        ("worker",),
    ],
    ids=["activity", "key list", "user disable", "worker"],
)
def test_a_command_that_needs_the_shop_refuses_a_folder_without_one_and_leaves_nothing(tmp_path, args):
    done = shop_command(tmp_path, *args)
    assert done.returncode == 1
    expected = tmp_path.resolve() / "instance" / "shop.sqlite3"
    assert f"No shop database at {expected}" in done.stderr and "SHOP_INSTANCE_PATH" in done.stderr
    assert list(tmp_path.iterdir()) == []  # no instance folder, database or secret key invented


def test_init_db_makes_the_database_and_the_next_command_finds_it(tmp_path):
    made = shop_command(tmp_path, "init-db")
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "instance" / "shop.sqlite3").exists()
    listed = shop_command(tmp_path, "key", "list", "--tenant", "acme")
    assert listed.returncode == 1 and "No tenant acme." in listed.stderr  # the database, no such shop
    assert "No shop database" not in listed.stderr


def test_migrate_in_a_new_folder_says_it_made_a_current_database(tmp_path):
    done = shop_command(tmp_path, "migrate")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (
        result["created"] is True
        and result["applied"] == []
        and result["from_version"] == result["to_version"]
    )
    assert "created a new database at the current version" in done.stderr and "it is current" in done.stderr


def run_demo(folder, *flags) -> str:
    """Start the demo in the folder, wait until it serves, stop it; what it printed."""
    port = free_port()
    command = [sys.executable, "-m", "flask", "--app", "shop", "shop", "demo", "--port", str(port), *flags]
    env = folder_env() | {"PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        wait_until(lambda: http_ok(f"http://127.0.0.1:{port}/api/v1/health"), timeout=60)
        headers = {"Authorization": "Bearer sk_test_acme_demo_0001"}
        customers = requests.get(
            f"http://127.0.0.1:{port}/api/v1/customers?limit=100", headers=headers, timeout=10
        )
        names = {customer["display_name"] for customer in customers.json()["data"]}
    finally:
        stop(proc)
    return proc.stdout.read(), names


def test_a_rerun_demo_keeps_the_data_and_reset_starts_over(tmp_path):
    first, names = run_demo(tmp_path)
    assert "Kept the data" not in first and "Ann Lee" in names
    added = shop_command(
        tmp_path,
        "activity",
        "customer.created",
        "--tenant",
        "acme",
        "--data",
        '{"display_name": "Zed Added"}',
    )
    assert added.returncode == 0, added.stderr
    again, names = run_demo(tmp_path)
    assert "Kept the data already in" in again and "--reset" in again
    assert "Zed Added" in names
    reset, names = run_demo(tmp_path, "--reset")
    assert "Kept the data" not in reset
    assert "Zed Added" not in names and "Ann Lee" in names

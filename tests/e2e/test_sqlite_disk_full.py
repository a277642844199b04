"""SQLite on a disk that fills up during writes: the writes that cannot be made are answered 503
service_unavailable with Retry-After (never 500), nothing acknowledged is lost, and writes succeed
again once space is freed, without a restart.

The disk is real: a 16 MiB tmpfs the test mounts (as root), holding the database, filled with a
file until the kernel says ENOSPC and freed by removing that file. Without the right to mount, the
test is skipped and says so.
"""

import errno
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from flask import Config

from shop import models
from shop.db import db
from shop.queue import setup
from tests.helpers import tenant_fixture

pytestmark = pytest.mark.sqlite_only

HEADERS = {"Authorization": "Bearer sk_test_acme_token_0001"}


@pytest.fixture
def small_disk(tmp_path):
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m,mode=0777", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


@pytest.fixture
def shop_on_small_disk(app, load, small_disk):
    """The in-process app on a database file on the small disk, with the acme tenant; the pass's
    database again afterwards."""
    config = Config(app.config.root_path)
    config.update(app.config)
    config["DATABASE"] = str(small_disk / "shop.sqlite3")
    try:
        setup(config)
        models.create_tables()
        load(tenant_fixture("acme"))
        yield small_disk
    finally:
        db.close()
        setup(app.config)


def fill(path: Path) -> None:
    """Write zeros into `path` until the file system is full (the last bytes 512 at a time)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (65536, 512):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError as error:
                assert error.errno == errno.ENOSPC, error
    finally:
        os.close(fd)


def create(client, n: int):
    body = {"url": "https://hooks.example.com/ok", "events": ["*"], "description": f"on a small disk {n}"}
    return client.post("/api/v1/webhooks", json=body, headers=HEADERS)


def test_a_full_disk_is_a_503_loses_nothing_acknowledged_and_passes_when_space_returns(
    app, shop_on_small_disk
):
    client = app.test_client()
    acknowledged = []
    for n in range(5):
        response = create(client, n)
        assert response.status_code == 201, response.get_data(as_text=True)
        acknowledged.append(response.get_json()["id"])
    filler = shop_on_small_disk / "filler"
    fill(filler)
    refused = 0
    for n in range(5, 400):  # until the database's own free pages are used up too
        response = create(client, n)
        if response.status_code == 201:
            acknowledged.append(response.get_json()["id"])
            continue
        assert response.status_code == 503, response.get_data(as_text=True)
        assert response.headers["Retry-After"].isdigit()
        assert response.get_json()["error"]["code"] == "service_unavailable"
        refused += 1
        if refused >= 3:
            break
    assert refused >= 3, "the disk never filled up"
    # a read is refused the same way (every request takes a token from the key's bucket, a write)
    read = client.get(f"/api/v1/webhooks/{acknowledged[0]}", headers=HEADERS)
    assert read.status_code == 503 and read.headers["Retry-After"].isdigit()

    os.unlink(filler)  # the cause goes away: the next write goes through, no restart
    response = create(client, 1000)
    assert response.status_code == 201, response.get_data(as_text=True)
    acknowledged.append(response.get_json()["id"])
    for sub_id in acknowledged:
        assert client.get(f"/api/v1/webhooks/{sub_id}", headers=HEADERS).status_code == 200, sub_id
    check = sqlite3.connect(shop_on_small_disk / "shop.sqlite3")
    try:
        assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        stored = {row[0] for row in check.execute("SELECT id FROM webhook_subscription")}
    finally:
        check.close()
    assert set(acknowledged) <= stored

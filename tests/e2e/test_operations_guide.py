"""docs/operations.md followed on loopback: its settings file, its wrapper and first-start commands,
gunicorn and the consumer as its systemd units start them; then an authenticated request and a
webhook delivery to a real HTTPS receiver go through, and its backup and restore bring the shop back.

Installing is the wheel test's (tests/e2e/test_wheel_install.py); here the checkout's environment
stands in for /opt/repair-shop/venv. The blocks run are the fenced blocks the guide names.
"""

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from shop.db import on_postgres
from tests.helpers import backends, guide
from tests.helpers.processes import ROOT, http_ok, stop, wait_until
from tests.helpers.receivers import free_port
from tests.helpers.webhook_receiver import WebhookReceiver

API_UNIT = "/etc/systemd/system/repair-shop-api.service"
WORKER_UNIT = "/etc/systemd/system/repair-shop-worker.service"
BACKUP_UNIT = "/etc/systemd/system/repair-shop-backup.service"


@pytest.fixture
def blocks() -> dict:
    return guide.named_blocks((ROOT / "docs" / "operations.md").read_text())


def clean_environment() -> dict:
    """The environment of a box: none of the test run's SHOP_* settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith("SHOP_")}


class Units:
    """Processes started as the guide's systemd units start them, stopped with their KillSignal."""

    def __init__(self, box: guide.Box, blocks: dict, log_dir: Path):
        self.box, self.blocks, self.log_dir, self.running = box, blocks, log_dir, []

    def start(self, unit: str) -> subprocess.Popen:
        settings = guide.unit_settings(self.blocks[unit])
        env_path = Path(self.box.moved(settings["EnvironmentFile"]))
        env = {**clean_environment(), **guide.env_file(env_path.read_text())}
        log = open(self.log_dir / f"{Path(unit).stem}.log", "a")
        proc = subprocess.Popen(
            shlex.split(self.box.moved(settings["ExecStart"])),
            cwd=self.box.moved(settings["WorkingDirectory"]),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.running.append((proc, log, getattr(signal, settings.get("KillSignal", "SIGTERM"))))
        return proc

    def stop_all(self) -> None:
        for proc, log, kill_signal in self.running:
            proc.send_signal(kill_signal)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                stop(proc)
            log.close()
        self.running = []


@pytest.fixture
def box(request, app, tmp_path, blocks):
    """The guide's files written (settings, wrapper, shop), a receiver, and the units to start."""
    port = free_port()
    moved = guide.Box(tmp_path / "box", Path(sys.executable).parent, port)
    receiver = WebhookReceiver(tmp_path).__enter__()
    settings = blocks["/etc/repair-shop/shop.env"]
    # what a loopback test adds: the receiver is on 127.0.0.1 with its own CA
    settings += f"SHOP_WEBHOOK_TRUSTED_NETWORKS=127.0.0.0/8\nSHOP_WEBHOOK_CA_BUNDLE={receiver.ca_path}\n"
    if on_postgres():  # the guide's SHOP_DATABASE line, on a database of its own
        settings += f"SHOP_DATABASE={backends.throwaway_postgres_database(request)}\n"
    moved.write("/etc/repair-shop/shop.env", settings, 0o640)
    moved.write("/usr/local/bin/repair-shop", blocks["/usr/local/bin/repair-shop"], 0o755)
    moved.write("/etc/repair-shop/shop.json", blocks["/etc/repair-shop/shop.json"])
    moved.receiver, moved.base = receiver, f"http://127.0.0.1:{port}/api/v1"
    moved.units = Units(moved, blocks, tmp_path)
    yield moved
    moved.units.stop_all()
    receiver.__exit__(None, None, None)


def run_step(box: guide.Box, block: str, **env) -> list[str]:
    """Run a shell step of the guide as the service user would (wrapper on PATH); each stdout."""
    path = f"{box.root / 'bin'}:{os.environ['PATH']}"
    outputs = []
    for line in guide.commands(box.moved(block)):
        result = subprocess.run(
            line, shell=True, env={**clean_environment(), "PATH": path, **env}, capture_output=True, text=True
        )
        assert result.returncode == 0, f"{line}\n{result.stdout}\n{result.stderr}"
        outputs.append(result.stdout)
    return outputs


def start_service(box) -> None:
    box.units.start(API_UNIT)
    box.units.start(WORKER_UNIT)
    wait_until(lambda: http_ok(f"{box.base}/health"), timeout=60)


def ping_reaches_the_receiver(box, headers: dict, sub_id: str, received: int) -> None:
    ping = requests.post(f"{box.base}/webhooks/{sub_id}/ping", headers=headers, timeout=10)
    assert ping.status_code == 202, ping.text
    wait_until(lambda: len(box.receiver.events()) == received, timeout=60)
    assert box.receiver.events()[-1]["body"]["type"] == "webhook.ping"
    url = f"{box.base}/webhooks/{sub_id}/deliveries/{ping.json()['id']}"
    wait_until(lambda: requests.get(url, headers=headers, timeout=10).json()["status"] == "delivered")


def test_the_operations_guide_runs_on_loopback(box, blocks):
    migrated, loaded = run_step(box, blocks["first-start"])
    assert json.loads(migrated)["to_version"] >= 1
    token = json.loads(loaded)["api_keys"][0]["token"]
    headers = {"Authorization": f"Bearer {token}"}

    start_service(box)
    (customers,) = run_step(box, blocks["check"], TOKEN=token)
    assert json.loads(customers)["object"] == "list"
    body = {"url": box.receiver.hook_url(), "events": ["customer.created"]}
    sub = requests.post(f"{box.base}/webhooks", headers=headers, json=body, timeout=10)
    assert sub.status_code == 201, sub.text
    ping_reaches_the_receiver(box, headers, sub.json()["id"], received=1)

    # the backup unit's commands while the service runs, then the guide's restore with it stopped
    backup = guide.unit_settings(blocks[BACKUP_UNIT])
    for command in (backup["ExecStart"], backup["ExecStartPost"]):
        subprocess.run(
            shlex.split(box.moved(command).replace("%%", "%")), check=True, env=clean_environment()
        )
    (taken,) = list((box.root / "backups").iterdir())
    assert json.loads((taken / "manifest.json").read_text())["secret_key"]["included"] is True
    box.units.stop_all()
    restore = re.sub(r"/\d{4}-\d\d-\d\dT\d{6}", f"/{taken.name}", blocks["restore"])
    (restored,) = run_step(box, restore)
    assert json.loads(restored)["schema"] == "current"

    start_service(box)
    ping_reaches_the_receiver(box, headers, sub.json()["id"], received=2)

"""A built wheel installs into a fresh virtual environment and runs from any directory."""

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.helpers.processes import ROOT, http_ok, stop, wait_until
from tests.helpers.receivers import free_port

FIXTURE = {
    "tenants": [
        {
            "id": "wheel",
            "name": "Wheel Repair",
            "api_keys": [
                {"id": "key_wheel", "token": "sk_test_wheel_token_0001", "scopes": ["appointments.read"]}
            ],
        }
    ]
}


LEFT_OUT_OF_THE_BUILD = (
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "instance",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A wheel of this checkout installed into a new virtual environment (no editable link)."""
    folder = tmp_path_factory.mktemp("wheel")
    env = clean_environment()
    # setuptools reuses a build/ folder it finds in the source tree, files deleted since included:
    # build from a copy of the checkout without it (nor the venv, the instance or git's objects)
    source = folder / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*LEFT_OUT_OF_THE_BUILD))
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", folder / "dist", source], env)
    wheel = next((folder / "dist").glob("repair_shop_service-*.whl"))
    run([sys.executable, "-m", "venv", folder / "venv"], env)
    run([folder / "venv/bin/python", "-m", "pip", "install", "-q", wheel], env)
    return folder / "venv/bin"


def clean_environment() -> dict:
    """The environment a new user has: none of the test run's SHOP_* settings or virtualenv."""
    drop = ("VIRTUAL_ENV", "PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHOP_") and k not in drop}
    return dict(env, PIP_DISABLE_PIP_VERSION_CHECK="1")


def run(command: list, env: dict, cwd: Path | None = None) -> str:
    result = subprocess.run(
        [str(part) for part in command], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"{command}: {result.stdout}\n{result.stderr}"
    return result.stdout


def test_installed_package_runs_from_another_directory(installed, tmp_path):
    env = clean_environment()
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    location = run([installed / "python", "-c", "import shop; print(shop.__file__)"], env, workdir)
    assert "site-packages" in location and str(ROOT) not in location
    init = json.loads(run([installed / "flask", "--app", "shop", "shop", "init-db"], env, workdir))
    assert init["database"] == str(workdir / "instance" / "shop.sqlite3")
    # the migration scripts ship in the wheel: the installed release knows every version
    scripts = sorted(path.name for path in (ROOT / "shop" / "migrations").glob("[0-9][0-9][0-9][0-9]_*.py"))
    assert init["schema_version"] == len(scripts) >= 2
    migrated = json.loads(run([installed / "flask", "--app", "shop", "shop", "migrate"], env, workdir))
    assert migrated["to_version"] == len(scripts) and migrated["applied"] == []
    site_packages = Path(location).parents[1]
    assert not (site_packages / "instance").exists()
    (workdir / "fixture.json").write_text(json.dumps(FIXTURE))
    run([installed / "flask", "--app", "shop", "shop", "load", "fixture.json"], env, workdir)
    assert "worker" in run([installed / "flask", "--app", "shop", "shop", "--help"], env, workdir)
    port = free_port()
    server = subprocess.Popen(
        [str(installed / "flask"), "--app", "shop", "run", "--port", str(port)],
        cwd=workdir,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}/api/v1"
        wait_until(lambda: http_ok(f"{base}/health"), timeout=30)
        me = requests.get(
            f"{base}/me", headers={"Authorization": "Bearer sk_test_wheel_token_0001"}, timeout=5
        )
        assert me.status_code == 200 and me.json()["tenant_id"] == "wheel"
        assert requests.get(f"{base}/docs/assets/swagger-ui-bundle.js", timeout=5).status_code == 200
    finally:
        stop(server)


def test_demo_runs_from_the_wheel(installed, tmp_path):
    env = clean_environment()
    port = free_port()
    demo = subprocess.Popen(
        [str(installed / "flask"), "--app", "shop", "shop", "demo", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}/api/v1"
        wait_until(lambda: http_ok(f"{base}/health"), timeout=30)
        me = requests.get(f"{base}/me", headers={"Authorization": "Bearer sk_test_acme_demo_0001"}, timeout=5)
        assert me.status_code == 200 and me.json()["tenant_id"] == "acme"
    finally:
        stop(demo)
    assert (tmp_path / "instance" / "shop.sqlite3").exists()
    # the in-app activity command the demo prints runs as printed from the wheel (no app.py here)
    printed = next(line for line in demo.stdout.read().splitlines() if " shop activity " in line)
    command = shlex.split(printed)
    assert command[0] == "flask"
    changed = json.loads(run([installed / "flask", *command[1:]], env, tmp_path))
    assert changed["id"] == "1001" and changed["status"] == "Ready"

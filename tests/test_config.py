"""Configuration order: defaults, then instance/config.py, then SHOP_* variables, then test dict."""

import pytest

from shop.config import DEFAULTS, ConfigError, check_settings, load_config, sms_provider
from shop.db import postgres_options


def test_order_of_configuration_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOP_INSTANCE_PATH", str(tmp_path))
    monkeypatch.delenv("SHOP_DATABASE", raising=False)
    monkeypatch.delenv("SHOP_SECRET_KEY", raising=False)
    (tmp_path / "config.py").write_text("RATE_LIMIT_CAPACITY = 7\nRATE_LIMIT_REFILL = 3\n")
    monkeypatch.setenv("SHOP_RATE_LIMIT_REFILL", "5")
    config = load_config()
    assert config["RATE_LIMIT_CAPACITY"] == 7  # instance/config.py over the default
    assert config["RATE_LIMIT_REFILL"] == 5  # environment over instance/config.py
    assert config["AUTH_FAILURES_PER_MINUTE"] == 20  # default
    assert config["DATABASE"] == str(tmp_path / "shop.sqlite3")
    assert load_config({"RATE_LIMIT_CAPACITY": 1})["RATE_LIMIT_CAPACITY"] == 1


def test_secret_key_is_generated_once_and_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOP_INSTANCE_PATH", str(tmp_path))
    monkeypatch.delenv("SHOP_SECRET_KEY", raising=False)
    first = load_config()["SECRET_KEY"]
    assert len(first) >= 48
    assert load_config()["SECRET_KEY"] == first
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_database_path_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOP_INSTANCE_PATH", str(tmp_path))
    monkeypatch.setenv("SHOP_DATABASE", str(tmp_path / "elsewhere.db"))
    assert load_config()["DATABASE"] == str(tmp_path / "elsewhere.db")


def test_instance_folder_is_in_the_working_directory(tmp_path, monkeypatch):
    # never beside the package: an installed copy would write its database into site-packages
    monkeypatch.delenv("SHOP_INSTANCE_PATH", raising=False)
    monkeypatch.delenv("SHOP_DATABASE", raising=False)
    monkeypatch.delenv("SHOP_SECRET_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    config = load_config()
    assert config.root_path == str(tmp_path / "instance")
    assert config["DATABASE"] == str(tmp_path / "instance" / "shop.sqlite3")
    assert (tmp_path / "instance" / "secret_key").exists()


def test_postgresql_commits_wait_for_the_disk_by_default(tmp_path, monkeypatch):
    # a write the API acknowledged survives a crash of the database machine unless the operator
    # chose SQLite's durability (off)
    monkeypatch.setenv("SHOP_INSTANCE_PATH", str(tmp_path))
    monkeypatch.delenv("SHOP_DB_SYNCHRONOUS_COMMIT", raising=False)
    assert load_config()["DB_SYNCHRONOUS_COMMIT"] == "on"
    assert "-c synchronous_commit=on" in postgres_options(10)
    monkeypatch.setenv("SHOP_DB_SYNCHRONOUS_COMMIT", "off")
    assert "-c synchronous_commit=off" in postgres_options(10, load_config()["DB_SYNCHRONOUS_COMMIT"])


def test_a_new_instance_folder_is_0700_and_its_database_0600(tmp_path, monkeypatch):
    """Issue 23, item 6: under the usual umask (022) nothing of the instance is readable by others."""
    import os
    import stat
    import subprocess
    import sys

    import pytest

    from shop.db import on_postgres

    if on_postgres():
        pytest.skip("a SQLite file's permissions")
    folder = tmp_path / "new" / "instance"
    env = {**os.environ, "SHOP_INSTANCE_PATH": str(folder)}
    env.pop("SHOP_DATABASE", None)
    env.pop("SHOP_SECRET_KEY", None)
    script = "import os; os.umask(0o022); from shop import create_app; create_app()"
    subprocess.run([sys.executable, "-c", script], env=env, check=True, capture_output=True, timeout=60)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = {path.name: stat.S_IMODE(path.stat().st_mode) for path in folder.iterdir() if path.is_file()}
    assert files["shop.sqlite3"] == 0o600 and files["secret_key"] == 0o600
    data = {name: mode for name, mode in files.items() if not name.endswith("-writers")}  # an empty lock file
    assert all(mode & 0o077 == 0 for mode in data.values()), files


SMS_SETTINGS = [
    ({}, "log"),
    ({"SMS_GATEWAY_URL": "https://gw.example/sms"}, "gateway"),
    ({"SMS_PROVIDER": "twilio", "TWILIO_ACCOUNT_SID": "AC1", "TWILIO_AUTH_TOKEN": "t"}, "twilio"),
    ({"SMS_PROVIDER": "Twilio", "TWILIO_ACCOUNT_SID": "AC1", "TWILIO_AUTH_TOKEN": "t"}, "twilio"),
    ({"SMS_PROVIDER": "log", "SMS_GATEWAY_URL": "https://gw.example/sms"}, "log"),
    (
        {"SMS_PROVIDER": "twilio", "SMS_GATEWAY_URL": "https://gw.example/sms", "TWILIO_ACCOUNT_SID": "AC1"}
        | {"TWILIO_AUTH_TOKEN": "t"},
        "twilio",
    ),
]


@pytest.mark.parametrize(
    ("settings", "provider"),
    SMS_SETTINGS,
    ids=[
        "nothing set sends through the log provider",
        "a gateway url picks the gateway",
        "twilio chosen with its account",
        "the provider's name in any case",
        "an explicit log provider wins over a gateway url",
        "an explicit twilio wins over a gateway url",
    ],
)
def test_the_sms_provider(settings, provider):
    assert sms_provider({**DEFAULTS, **settings}) == provider


REFUSED = [
    (
        {"SMS_PROVIDER": "twilio"},
        "SHOP_SMS_PROVIDER=twilio needs SHOP_TWILIO_ACCOUNT_SID and SHOP_TWILIO_AUTH_TOKEN",
    ),
    (
        {"SMS_PROVIDER": "twilio", "TWILIO_ACCOUNT_SID": "AC1"},
        "SHOP_SMS_PROVIDER=twilio needs SHOP_TWILIO_ACCOUNT_SID and SHOP_TWILIO_AUTH_TOKEN",
    ),
    ({"SMS_PROVIDER": "gateway"}, "SHOP_SMS_PROVIDER=gateway needs SHOP_SMS_GATEWAY_URL"),
    ({"SMS_PROVIDER": "pigeon"}, "SHOP_SMS_PROVIDER must be one of gateway, twilio, log, not 'pigeon'"),
]


@pytest.mark.parametrize(
    ("settings", "says"),
    REFUSED,
    ids=["twilio without its account", "twilio without its token", "gateway without its url", "unknown"],
)
def test_an_sms_provider_without_its_settings_stops_the_start(settings, says, tmp_path, monkeypatch):
    monkeypatch.setenv("SHOP_INSTANCE_PATH", str(tmp_path))
    with pytest.raises(ConfigError) as refused:
        check_settings(load_config(settings))
    assert str(refused.value).startswith(says)

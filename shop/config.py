"""Configuration: defaults, then instance/config.py, then SHOP_* environment variables."""

import os
import secrets
from pathlib import Path

from flask import Config

DEFAULTS = {
    # storage
    "DATABASE": None,  # resolved by database_path(): instance/shop.sqlite3
    "SECRET_KEY": None,  # resolved by secret_key(): instance/secret_key
    "DB_BUSY_TIMEOUT_SECONDS": 10,
    # PostgreSQL only: whether a commit waits for its WAL flush ("on"); "off" matches SQLite's
    # synchronous=NORMAL (a crash of the machine may lose the last commits, never corrupts)
    "DB_SYNCHRONOUS_COMMIT": "on",
    # request limits
    "MAX_CONTENT_LENGTH": 3 * 1024 * 1024,
    "RATE_LIMIT_CAPACITY": 100,
    "RATE_LIMIT_REFILL": 10,
    "AUTH_FAILURES_PER_MINUTE": 20,
    # idempotency
    "IDEMPOTENCY_RETENTION_SECONDS": 24 * 3600,
    "IDEMPOTENCY_LOCK_SECONDS": 60,
    # usage reporting
    "USAGE_TIME_BUDGET_MS": 5000,
    "USAGE_READ_SAMPLE_RATE": 1.0,
    "USAGE_RETENTION_DAYS": 90,
    # billing gates
    "UPGRADE_URL": "https://billing.repair-shop.invalid/upgrade",
    # webhooks (used by the delivery issues)
    "WEBHOOK_ALLOW_HTTP": False,
    "WEBHOOK_TRUSTED_NETWORKS": "",
    "WEBHOOK_RETRY_DELAYS": "0,60,300,1800,7200,21600,43200,86400",
    "WEBHOOK_TIMEOUT": 10,
    "WEBHOOK_CA_BUNDLE": None,
    # messaging
    "SMTP_URL": None,
    "SMTP_FROM": "repair-shop@localhost",
    "SMS_GATEWAY_URL": None,
    "SMS_FROM": None,
    "SEND_RETRY_DELAYS": "10,60,300,1800,7200",
    "SEND_CLAIM_SECONDS": 300,
    # health: a consumer writes its heartbeat this often; health calls it stale when the newest
    # is older than the second, and work overdue when it fell due longer ago than the third
    "CONSUMER_HEARTBEAT_SECONDS": 15,
    "HEALTH_HEARTBEAT_STALE_SECONDS": 60,
    "HEALTH_OVERDUE_SECONDS": 300,
    # metrics: GET /metrics is off unless a token is set; the processes of a box share a directory
    "METRICS_TOKEN": None,
    "METRICS_DIR": None,  # resolved by shop.platform.metrics: PROMETHEUS_MULTIPROC_DIR or instance/metrics
}


def instance_path() -> Path:
    """The instance folder: SHOP_INSTANCE_PATH, or ./instance of the working directory."""
    # never beside the package: an installed copy would write its database into site-packages
    configured = os.environ.get("SHOP_INSTANCE_PATH")
    path = (Path(configured) if configured else Path.cwd() / "instance").resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def load_config(test_config: dict | None = None) -> Config:
    """Build the configuration the web app and the Huey consumer share."""
    folder = instance_path()
    config = Config(str(folder))
    config.from_mapping(DEFAULTS)
    config.from_pyfile("config.py", silent=True)
    config.from_prefixed_env("SHOP")
    if test_config:
        config.from_mapping(test_config)
    config["DATABASE"] = database_path(config)
    config["SECRET_KEY"] = secret_key(config)
    return config


POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def database_path(config) -> str:
    """The one place that decides which database the app and the consumer open.

    A SQLite file path (or `sqlite:///PATH`) comes back absolute; a PostgreSQL URL
    (`postgresql://` or `postgres://`) comes back as a `postgresql://` URL.
    """
    target = str(config.get("DATABASE") or Path(config.root_path) / "shop.sqlite3")
    if target.startswith(POSTGRES_SCHEMES):
        return "postgresql://" + target.split("://", 1)[1]
    if target.startswith("sqlite:///"):  # as peewee's db_url: sqlite:///rel/path, sqlite:////abs/path
        target = target[len("sqlite:///") :]
    return str(Path(target).expanduser().resolve())


def is_postgres(target: str | None) -> bool:
    """Whether a resolved database target names a PostgreSQL database."""
    return bool(target) and str(target).startswith("postgresql://")


def secret_key(config) -> str:
    """SHOP_SECRET_KEY, or a key generated once into the instance folder."""
    if config.get("SECRET_KEY"):
        return str(config["SECRET_KEY"])
    path = Path(config.root_path) / "secret_key"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_urlsafe(48))
    return path.read_text().strip()

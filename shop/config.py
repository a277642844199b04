"""Configuration: defaults, then instance/config.py, then SHOP_* environment variables."""

import os
import secrets
from pathlib import Path

from flask import Config

DEFAULTS = {
    # storage
    "DATABASE": None,  # resolved by database_path(): instance/shop.sqlite3
    "SECRET_KEY": None,  # resolved by secret_key(): instance/secret_key
    # keys that still open stored secrets and cursors but encrypt nothing (a rotation in progress)
    "SECRET_KEY_FALLBACKS": "",
    "DB_BUSY_TIMEOUT_SECONDS": 10,
    # PostgreSQL only: whether a commit waits for its WAL flush ("on"); "off" matches SQLite's
    # synchronous=NORMAL (a crash of the machine may lose the last commits, never corrupts)
    "DB_SYNCHRONOUS_COMMIT": "on",
    # request limits
    "MAX_CONTENT_LENGTH": 3 * 1024 * 1024,
    "RATE_LIMIT_CAPACITY": 100,
    "RATE_LIMIT_REFILL": 10,
    "AUTH_FAILURES_PER_MINUTE": 20,
    # a teammate's console sign-in (issue 27): failed attempts per account within the window
    "SIGN_IN_FAILURES_PER_ACCOUNT": 5,
    "SIGN_IN_WINDOW_SECONDS": 15 * 60,
    "PASSWORD_HASH_METHOD": "scrypt",  # werkzeug.security's method string
    # the online booking page: requests per client address (a token bucket), and the least time a
    # person takes to fill in the details form (faster is a bot)
    "BOOKING_RATE_CAPACITY": 60,
    "BOOKING_RATE_REFILL": 0.5,
    "BOOKING_MIN_FILL_SECONDS": 3,
    # idempotency
    "IDEMPOTENCY_RETENTION_SECONDS": 24 * 3600,
    "IDEMPOTENCY_LOCK_SECONDS": 60,
    # usage reporting
    "USAGE_TIME_BUDGET_MS": 5000,
    "USAGE_READ_SAMPLE_RATE": 1.0,
    # retention (shop/domain/retention.py): unset means its default there; SHOP_USAGE_RETENTION_DAYS,
    # the older name of SHOP_RETENTION_USAGE_DAYS, is still read
    "RETENTION_DELIVERY_DAYS": None,
    "RETENTION_USAGE_DAYS": None,
    "RETENTION_IDEMPOTENCY_HOURS": None,
    "RETENTION_BATCH_SIZE": None,
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
    # two-way messaging (issue 26): the SMS provider (`gateway` when SMS_GATEWAY_URL is set,
    # `twilio`, else `log`); each inbound route is off (404) while its secret is unset
    "SMS_PROVIDER": None,
    "TWILIO_ACCOUNT_SID": None,
    "TWILIO_AUTH_TOKEN": None,
    "TWILIO_API_URL": "https://api.twilio.com",
    "SMS_GATEWAY_SECRET": None,
    "INBOUND_EMAIL_TOKEN": None,
    "INBOUND_EMAIL_DOMAIN": None,
    "INBOUND_MAX_BYTES": 10 * 1024 * 1024,
    # the address the public reaches the service at (Twilio signs it): https://shop.example.com
    "PUBLIC_URL": None,
    # operations
    "TRUSTED_PROXIES": 0,  # reverse proxies in front whose X-Forwarded-For/-Proto are believed
    "LOG_FORMAT": "text",  # or "json": one object per line
    "LOG_LEVEL": "INFO",
    # health: a consumer writes its heartbeat this often; health calls it stale when the newest
    # is older than the second, and work overdue when it fell due longer ago than the third
    "CONSUMER_HEARTBEAT_SECONDS": 15,
    "HEALTH_HEARTBEAT_STALE_SECONDS": 60,
    "HEALTH_OVERDUE_SECONDS": 300,
    # metrics: GET /metrics is off unless a token is set; the processes of a box share a directory
    "METRICS_TOKEN": None,
    "METRICS_DIR": None,  # resolved by shop.platform.metrics: PROMETHEUS_MULTIPROC_DIR or instance/metrics
}
# the most proxies that can sit in front; a larger count is a typo, not a topology
MAX_TRUSTED_PROXIES = 10
LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
SMS_PROVIDERS = ("gateway", "twilio", "log")


class ConfigError(ValueError):
    """A setting with a value the service cannot run with; the message names the setting."""


# instance folders this process created (a command that may not invent a database removes them)
CREATED_FOLDERS: set[Path] = set()


def instance_path() -> Path:
    """The instance folder: SHOP_INSTANCE_PATH, or ./instance of the working directory."""
    # never beside the package: an installed copy would write its database into site-packages
    configured = os.environ.get("SHOP_INSTANCE_PATH")
    path = (Path(configured) if configured else Path.cwd() / "instance").resolve()
    if not path.exists():  # it holds the database and the secret key: the service user's alone
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.chmod(0o700)  # whatever the umask
        CREATED_FOLDERS.add(path)
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
    # the key file when the key comes from it (rotate-secret-key rewrites it; processes re-read it)
    config["SECRET_KEY_FILE"] = None if config.get("SECRET_KEY") else str(key_file_path(config))
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


def key_file_path(config) -> Path:
    """Where the instance's generated secret key lives: instance/secret_key."""
    return Path(config.root_path) / "secret_key"


def secret_key(config) -> str:
    """SHOP_SECRET_KEY, or a key generated once into the instance folder."""
    if config.get("SECRET_KEY"):
        return str(config["SECRET_KEY"])
    path = key_file_path(config)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_urlsafe(48))
    return path.read_text().strip()


def trusted_proxies(config) -> int:
    """SHOP_TRUSTED_PROXIES as a count from 0 to MAX_TRUSTED_PROXIES; ConfigError otherwise."""
    value = config.get("TRUSTED_PROXIES", 0)
    if isinstance(value, str) and value.strip().isdigit():  # from instance/config.py as a string
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TRUSTED_PROXIES:
        raise ConfigError(
            f"SHOP_TRUSTED_PROXIES must be a whole number from 0 to {MAX_TRUSTED_PROXIES} (the reverse "
            f"proxies in front of the service; 0 when clients connect directly), not {value!r}"
        )
    return value


def log_format(config) -> str:
    """SHOP_LOG_FORMAT: text or json; ConfigError otherwise."""
    value = config.get("LOG_FORMAT") or "text"
    if not isinstance(value, str) or value.lower() not in LOG_FORMATS:
        raise ConfigError(f"SHOP_LOG_FORMAT must be text or json, not {value!r}")
    return value.lower()


def log_level(config) -> str:
    """SHOP_LOG_LEVEL: DEBUG, INFO, WARNING or ERROR; ConfigError otherwise."""
    value = config.get("LOG_LEVEL") or "INFO"
    if not isinstance(value, str) or value.upper() not in LOG_LEVELS:
        raise ConfigError(f"SHOP_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, not {value!r}")
    return value.upper()


def sms_provider(config) -> str:
    """SHOP_SMS_PROVIDER when set (`gateway`, `twilio` or `log`), else `gateway` when
    SHOP_SMS_GATEWAY_URL is set, else `log`; ConfigError for a provider that lacks its settings."""
    value = config.get("SMS_PROVIDER") or ("gateway" if config.get("SMS_GATEWAY_URL") else "log")
    if not isinstance(value, str) or value.lower() not in SMS_PROVIDERS:
        raise ConfigError(f"SHOP_SMS_PROVIDER must be one of {', '.join(SMS_PROVIDERS)}, not {value!r}")
    value = value.lower()
    if value == "twilio" and not (config.get("TWILIO_ACCOUNT_SID") and config.get("TWILIO_AUTH_TOKEN")):
        raise ConfigError(
            "SHOP_SMS_PROVIDER=twilio needs SHOP_TWILIO_ACCOUNT_SID and SHOP_TWILIO_AUTH_TOKEN "
            "(the account's SID and auth token from Twilio's console)"
        )
    if value == "gateway" and not config.get("SMS_GATEWAY_URL"):
        raise ConfigError("SHOP_SMS_PROVIDER=gateway needs SHOP_SMS_GATEWAY_URL")
    return value


def check_settings(config) -> None:
    """Refuse settings the service cannot run with (ConfigError names the setting); the app and
    the consumer call it before they open anything."""
    trusted_proxies(config)
    log_format(config)
    log_level(config)
    sms_provider(config)

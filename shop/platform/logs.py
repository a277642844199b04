"""Log output of the API and the consumer: readable text (the default) or one JSON object a line."""

import json
import logging
import sys
from datetime import UTC, datetime

from shop.config import log_format, log_level
from shop.platform import redaction

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Huey's lines about the periodic tasks it queues: one a minute per sweep, nothing an operator needs
PERIODIC_CHATTER = ("huey.consumer.Scheduler",)


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, then the record's `fields`."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(getattr(record, "fields", None) or {})
        if record.exc_info and not record.exc_text:
            record.exc_text = redaction.redact(self.formatException(record.exc_info))
        if record.exc_text:
            entry["traceback"] = record.exc_text
        return json.dumps(entry, default=str, ensure_ascii=False)


def make_handler(fmt: str, stream=None) -> logging.Handler:
    """A stream handler (stderr by default) in `fmt` (text or json) that masks secrets."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    handler.addFilter(redaction.RedactSecrets())
    return handler


class ToDebug(logging.Filter):
    """Demotes a logger's records to DEBUG (dropped unless that logger is at DEBUG)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def configure(config) -> None:
    """Log to stderr in SHOP_LOG_FORMAT at SHOP_LOG_LEVEL, unless the host (gunicorn's
    logconfig, pytest) already put handlers on the root logger; mask the configured secrets."""
    level = log_level(config)
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(make_handler(log_format(config)))
        root.setLevel(level)
    logging.getLogger("shop").setLevel(level)
    for name in PERIODIC_CHATTER:
        chatter = logging.getLogger(name)
        if not any(isinstance(f, ToDebug) for f in chatter.filters):
            chatter.addFilter(ToDebug())
    redaction.install()
    fallbacks = str(config.get("SECRET_KEY_FALLBACKS") or "").split(",")
    redaction.remember(config.get("SECRET_KEY"), config.get("METRICS_TOKEN"), *fallbacks)

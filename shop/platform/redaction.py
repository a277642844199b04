"""Secrets never reach a log line: API tokens and signing secrets are masked before formatting."""

import logging
import re

SECRET_PATTERN = re.compile(r"\b(sk_(?:live|test)_|whsec_)[A-Za-z0-9_\-]{4,}")


def redact(text: str) -> str:
    """The text with every token-shaped secret replaced by its prefix and a mask."""
    return SECRET_PATTERN.sub(lambda m: m.group(1) + "[redacted]", text)


class RedactSecrets(logging.Filter):
    """A handler filter that masks secrets in the message and in the formatted traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


def install() -> None:
    """Put the filter on every handler of the root logger that does not have it yet."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactSecrets) for f in handler.filters):
            handler.addFilter(RedactSecrets())

"""Secrets never reach a log line: tokens, signing secrets, signatures and keys are masked before output."""

import logging
import re
import threading

# what a secret looks like wherever it appears: (pattern, what replaces the match)
SECRET_PATTERNS = (
    # API tokens and webhook signing secrets keep their prefix, so a line still says what it was
    (re.compile(r"\b(sk_(?:live|test)_|whsec_)[A-Za-z0-9_\-]{4,}"), r"\1[redacted]"),
    # an Authorization header's credentials, whatever their shape
    (re.compile(r"\b(Bearer|Basic)(\s+)[^\s\"',;]+", re.IGNORECASE), r"\1\2[redacted]"),
    # Service-Signature's HMACs (t=...,v1=<hex>)
    (re.compile(r"\b(v1=)[0-9a-fA-F]{16,}"), r"\1[redacted]"),
    # a secret's stored (encrypted) form: useless without the key, but no business in a log
    (re.compile(r"\b(fernet:)[A-Za-z0-9_\-=]{8,}"), r"\1[redacted]"),
    # the password of a URL (smtp://user:pass@host, postgresql://user:pass@host/db)
    (re.compile(r"\b([a-z][a-z0-9+.\-]*://[^:/\s@]*:)[^@\s/]+@", re.IGNORECASE), r"\1[redacted]@"),
    # a calendar feed's token is its credential: the dev server's and a proxy's access lines hold it
    (re.compile(r"(/calendar/)[A-Za-z0-9_\-]{8,}(\.ics)"), r"\1[redacted]\2"),
    # a teammate's stored password (werkzeug's method$salt$hash): peewee's DEBUG lines show its row
    (re.compile(r"\b((?:scrypt|pbkdf2)[:\w]*\$)[^\s'\"$]+\$[0-9a-fA-F]+"), r"\1[redacted]"),
    # a SHA-256 digest of a secret (an API key's token_hash, a session id, a portal link's hash)
    (re.compile(r"\b[0-9a-fA-F]{64}\b"), "[redacted-digest]"),
)
# one pass that finds none of the above in most lines, so they skip the substitutions
_MARKERS = r"sk_|whsec_|bearer|basic|v1=|fernet:|://|/calendar/|scrypt|pbkdf2"
MIGHT_HOLD_A_SECRET = re.compile(rf"{_MARKERS}|[0-9a-f]{{64}}", re.IGNORECASE)
# the same test for ASCII text, where lowering the text is exactly the pattern's IGNORECASE: a
# case-insensitive alternation scans slowly in `re` (50 us for a webhook attempt's line, a tenth of
# the attempt's CPU; docs/performance.md, session 9), the lowered text and one hex run take 5
MARKERS = re.compile(_MARKERS)
HEX_RUN = re.compile(r"[0-9a-fA-F]{64}")
# literal values the service holds (the instance secret key, the metrics token): masked as such
_known: tuple[str, ...] = ()  # longest first, so a value inside another is masked as part of it
_known_lock = threading.Lock()
SHORTEST_KNOWN = 8  # a shorter value would mask ordinary words


def remember(*values) -> None:
    """Mask these literal secrets from now on (empty and short values are ignored)."""
    global _known
    with _known_lock:
        fresh = {str(v) for v in values if v and len(str(v)) >= SHORTEST_KNOWN}
        _known = tuple(sorted(set(_known) | fresh, key=len, reverse=True))


def redact(text: str) -> str:
    """The text with every secret replaced by a mask (its prefix kept where it has one)."""
    if might_hold_a_secret(text):
        for pattern, mask in SECRET_PATTERNS:
            text = pattern.sub(mask, text)
    for value in _known:
        if value in text:
            text = text.replace(value, "[redacted]")
    return text


def might_hold_a_secret(text: str) -> bool:
    """Whether MIGHT_HOLD_A_SECRET finds anything in `text` (the quick way for ASCII text)."""
    if not text.isascii():  # IGNORECASE folds letters lower() does not (the long s, the Kelvin sign)
        return MIGHT_HOLD_A_SECRET.search(text) is not None
    return MARKERS.search(text.lower()) is not None or (len(text) >= 64 and HEX_RUN.search(text) is not None)


def redact_value(value):
    """A structured log field with every string inside it redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        if _plain_and_clean(value):
            return dict(value)
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value


def _plain_and_clean(fields: dict) -> bool:
    """Whether a dict of plain values (no nested ones) holds no string redact() would change, in one
    look at all its strings: what the pre-check or a known value finds in one of them, it finds in
    them joined (a log line's dozen fields cost a dozen looks otherwise)."""
    strings = []
    for value in fields.values():
        if isinstance(value, str):
            strings.append(value)
        elif value is not None and not isinstance(value, (int, float)):
            return False
    text = "\n".join(strings)
    return not might_hold_a_secret(text) and not any(value in text for value in _known)


class RedactSecrets(logging.Filter):
    """A handler filter that masks secrets in the message, its fields and the formatted traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        if isinstance(getattr(record, "fields", None), dict):
            record.fields = redact_value(record.fields)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


def install(logger: logging.Logger | None = None) -> None:
    """Put the filter on every handler of the logger (the root's) that does not have it yet."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactSecrets) for f in handler.filters):
            handler.addFilter(RedactSecrets())

"""The customer forms' guards: a CSRF token (a cookie and the form agree, as there is no session),
a honeypot field, a minimum time to fill the form in, and one bounded value per field."""

import hmac
import secrets
import time

from flask import current_app, request
from itsdangerous import BadSignature, TimestampSigner

from shop.platform.errors import ApiError

CSRF_COOKIE = "shop_book"
CSRF_FIELD = "csrf_token"
HONEYPOT = "website"  # hidden from people (off-screen, out of the tab order); bots fill it in
STARTED = "started"  # when the form was served, signed: a person takes a few seconds to fill it
BOT_REFUSAL = "We could not accept this form. If you are a person, wait a moment and send it again."


def csrf_token() -> str:
    """The browser's token (from its cookie) or a new one for the page to set."""
    sent = request.cookies.get(CSRF_COOKIE, "")
    return sent if 20 <= len(sent) <= 100 else secrets.token_urlsafe(32)


def set_csrf_cookie(response, token: str, path: str = "/book/") -> None:
    response.set_cookie(
        CSRF_COOKIE, token, httponly=True, samesite="Strict", secure=request.is_secure, path=path
    )


def check_csrf() -> None:
    """403 unless the form carries the token its cookie holds (a cross-site post has no cookie)."""
    sent, expected = request.form.get(CSRF_FIELD, ""), request.cookies.get(CSRF_COOKIE, "")
    if not expected or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise ApiError(403, "csrf_failed", "This form is out of date; reload the page and try again.")


def _signer() -> TimestampSigner:
    return TimestampSigner(current_app.secret_key, salt="shop.portal.started")


def started_stamp() -> str:
    """The signed moment the form was served."""
    return _signer().sign(secrets.token_hex(4)).decode()


def check_not_a_bot(timed: bool = True) -> None:
    """400 for a filled-in honeypot, or (timed) a form sent faster than a person types or without
    its signed start; checked before anything is read or written."""
    if request.form.get(HONEYPOT, ""):
        raise ApiError(400, "bot_suspected", BOT_REFUSAL)
    if not timed:
        return
    try:
        _, stamp = _signer().unsign(request.form.get(STARTED, ""), return_timestamp=True)
    except BadSignature:
        raise ApiError(400, "bot_suspected", BOT_REFUSAL) from None
    if time.time() - stamp.timestamp() < float(current_app.config["BOOKING_MIN_FILL_SECONDS"]):
        raise ApiError(400, "bot_suspected", BOT_REFUSAL)


def value(name: str, max_length: int, multiline: bool = False) -> str | None:
    """One text value (None when empty); a repeated or over-long one, or one with control characters
    (line breaks only where `multiline`), is a 400 naming the field."""
    values = request.form.getlist(name)
    if len(values) > 1:
        raise ApiError(400, "invalid_field", "Send this field once.", param=name)
    text = values[0].strip() if values else ""
    if len(text) > max_length:
        raise ApiError(400, "invalid_field", f"At most {max_length} characters.", param=name)
    allowed = "\n\r\t" if multiline else ""
    if any((ord(c) < 32 and c not in allowed) or ord(c) == 127 for c in text):
        raise ApiError(400, "invalid_field", "Remove the control characters.", param=name)
    return text or None

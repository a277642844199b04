"""The /inbound/ blueprint and what its adapters share: the off switch, size and text checks."""

from functools import wraps

from flask import Blueprint, current_app, request
from werkzeug.exceptions import NotFound

from shop.platform.errors import ApiError

bp = Blueprint("inbound", __name__, url_prefix="/inbound")
SMS_MAX_BYTES = 256 * 1024  # a provider's SMS webhook is a few hundred bytes; MMS adds only URLs
TEXT_LIMIT = 10_000


def enabled_by(setting: str):
    """A provider route answers only while `setting` (its secret) is set: 404 otherwise, as an
    unknown route. It needs no API key (the provider's signature is checked instead)."""

    def decorator(view):
        @wraps(view)
        def guarded(*args, **kwargs):
            if not current_app.config.get(setting):
                raise NotFound()
            return view(*args, **kwargs)

        guarded._public = True
        return guarded

    return decorator


def limit_body(limit: int) -> bytes:
    """The raw body, or 413 when it is larger than `limit` bytes (checked before reading it)."""
    too_large = ApiError(413, "payload_too_large", f"The request body exceeds {limit} bytes.")
    if request.content_length is not None and request.content_length > limit:
        raise too_large
    request.max_content_length = limit
    try:
        body = request.get_data(cache=True)
    except Exception:  # werkzeug's RequestEntityTooLarge on a chunked body, or a broken stream
        raise too_large from None
    if len(body) > limit:
        raise too_large
    return body


def require_type(*mimetypes: str) -> None:
    """415 unless the body is of one of these types."""
    if request.mimetype not in mimetypes:
        raise ApiError(415, "unsupported_media_type", f"This route takes {' or '.join(mimetypes)} bodies.")


def text_field(value, param: str, required: bool = True, limit: int = TEXT_LIMIT) -> str | None:
    """A string field of a provider's body: present if required, no NUL or control characters
    but line breaks and tabs, at most `limit` characters; 400 naming `param` otherwise."""
    if value is None or value == "":
        if required:
            raise ApiError(400, "missing_field", f"{param} is required.", param=param)
        return None
    if not isinstance(value, str):
        raise ApiError(400, "invalid_field", f"{param} must be a string.", param=param)
    if len(value) > limit:
        raise ApiError(400, "invalid_field", f"{param} is longer than {limit} characters.", param=param)
    if any(ord(c) < 32 and c not in "\r\n\t" for c in value):
        raise ApiError(400, "invalid_field", f"{param} contains control characters.", param=param)
    return value


def e164(value, param: str) -> str:
    """A phone number in E.164 (spaces, dashes and brackets dropped), or 400 naming `param`."""
    from shop.domain.messaging.sending import PHONE, normalise_address

    number = normalise_address("sms", text_field(value, param, limit=50))
    if not PHONE.match(number):
        raise ApiError(400, "invalid_field", f"{param} is not an E.164 phone number.", param=param)
    return number

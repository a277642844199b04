"""Reading console form fields: one value each, bounded, or a 400 page naming the field."""

import marshmallow as ma
from flask import request

from shop.platform.errors import ApiError
from shop.platform.ids import parse_id
from shop.platform.validation import refuse_unstorable


def _refuse(name: str, message: str) -> ApiError:
    return ApiError(400, "invalid_field", f"{name}: {message}", param=name)


def text(name: str, max_length: int = 200, required: bool = True) -> str | None:
    """One text value of the form (a repeated field is refused, not silently narrowed)."""
    values = request.form.getlist(name)
    if len(values) > 1:
        raise _refuse(name, "send it once.")
    value = values[0].strip() if values else ""
    if not value:
        if required:
            raise _refuse(name, "this field is required.")
        return None
    if len(value) > max_length:
        raise _refuse(name, f"at most {max_length} characters.")
    return value


def record_id(name: str) -> int:
    """A numeric record id from the form (the API's rule for path ids: digits, within range)."""
    return parse_id(text(name, 40), param=name)


def one_of(name: str, allowed: tuple[str, ...], default: str) -> str:
    """A single choice (a radio, a submit button's value); absent means the default."""
    value = text(name, max(map(len, allowed)), required=False) or default
    if value not in allowed:
        raise _refuse(name, f"one of {', '.join(allowed)}.")
    return value


def choices(name: str, allowed: tuple[str, ...]) -> list[str]:
    """The checked boxes of a multi-choice field; each one must be offered."""
    values = request.form.getlist(name)
    if len(values) > len(allowed) or any(value not in allowed for value in values):
        raise _refuse(name, f"choose among {', '.join(allowed)}.")
    return list(dict.fromkeys(values))


def load(schema, data: dict) -> dict:
    """Form values through the API's own schema for the same call: one set of rules for both."""
    refuse_unstorable(data)  # a NUL or a lone surrogate: the API's 400, not a 500 on PostgreSQL
    try:
        return schema.load(data)
    except ma.ValidationError as error:
        name, problems = next(iter(error.normalized_messages().items()))
        detail = problems[0] if isinstance(problems, list) else "not valid."
        raise _refuse(name, str(detail)) from None


def gather(errors: dict, read):
    """One field's reader: its value, or None with its refusal put in `errors` under the field's name,
    so that every bad field of a form is shown beside it at once."""
    try:
        return read()
    except ApiError as error:
        if error.status != 400:
            raise
        errors.setdefault(error.param or "form", error.message)
        return None

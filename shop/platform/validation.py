"""webargs parsing with the spec's error codes: arrays in queries caught, marshmallow errors mapped."""

import json
import math
import re

from flask import g, request
from webargs import core
from webargs.flaskparser import FlaskParser, is_json_request

from shop.platform.errors import ApiError

MISSING = "Missing data for required field."
INT32_MAX = 2_147_483_647
# marshmallow's wording for an integer beyond the 32-bit range (see fields.Int32)
INT32_MESSAGE = f"Must be at most {INT32_MAX}."
SURROGATE = re.compile("[\ud800-\udfff]")
NUL = re.compile("\x00")  # PostgreSQL refuses it in any text value


def _not_json(constant: str):
    raise ValueError(f"{constant} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("a number too large for a float")
    return value


class ShopParser(FlaskParser):
    """A parser that turns every failure into an ApiError with the spec's code and param."""

    def load_querystring(self, req, schema):
        """Query values as a dict; a parameter of the schema given as an array or object
        (`?a=1&a=2`, `a[]=1`, `a[x]=1`) is 400 invalid_query, before any parameter's own code."""
        data = {}
        fields = {field.data_key or name: field for name, field in schema.fields.items()}
        for key in req.args.keys():
            values = req.args.getlist(key)
            base = key.split("[", 1)[0] if key.endswith("]") and "[" in key else key
            if base != key or len(values) > 1 or base in data:
                if base in fields:  # a field may name its own code (the cursor: invalid_cursor)
                    code = fields[base].metadata.get("array_code", "invalid_query")
                    raise ApiError(400, code, f"{base} must be given once, as a plain value.", param=base)
                data[base] = list(values)
            else:
                data[base] = values[0]
                if base in fields and NUL.search(values[0]):
                    refuse_nul_in_query(base, fields[base])
        return data

    def _raw_load_json(self, req):
        """The parsed body; text that parses to nothing Python can hold is invalid JSON, not a 500.

        json.loads raises RecursionError on arrays or objects nested thousands deep and a plain
        ValueError on an integer literal past Python's 4300-digit conversion limit. Python also
        reads NaN and Infinity, which JSON does not have, and 1e999 as infinity: refused too.
        """
        if not is_json_request(req):
            return core.missing
        try:
            return json.loads(
                req.get_data(cache=True).decode(), parse_constant=_not_json, parse_float=_finite
            )
        except json.JSONDecodeError:
            raise
        except (RecursionError, ValueError):  # UnicodeDecodeError and NaN/Infinity/1e999 too
            raise ApiError(400, "invalid_json", "The request body is not valid JSON.") from None

    def load_json(self, req, schema):
        """The JSON body, refusing strings one of the backends cannot store (see refuse_unstorable)."""
        data = super().load_json(req, schema)
        refuse_unstorable(data)
        return data

    def handle_error(self, error, req, schema, *, error_status_code, error_headers):
        raise validation_error(error.messages, schema)

    def _handle_invalid_json_error(self, error, req, *args, **kwargs):
        raise ApiError(400, "invalid_json", "The request body is not valid JSON.")


def refuse_unknown_query() -> None:
    """before_request, after authentication: a query parameter the view's query schema does not
    name is 400 invalid_query naming it (as Stripe does), instead of being dropped silently. Every
    view of the smorest Blueprint is held to it (its `route` marks them, its `arguments` records the
    names), so a new route inherits the rule; a view marked lenient_query is exempt (usage)."""
    view = getattr(g, "view", None)
    if view is None or not getattr(view, "_query_checked", False) or getattr(view, "_lenient_query", False):
        return
    accepted = getattr(view, "_query_names", frozenset())
    for key in request.args.keys():
        name = key.split("[", 1)[0] if key.endswith("]") and "[" in key else key
        if name not in accepted:
            known = ", ".join(sorted(accepted)) or "none"
            raise ApiError(
                400,
                "invalid_query",
                f"Unknown query parameter: {name[:100]}. This endpoint accepts: {known}.",
                param=name[:100],
            )


def refuse_nul_in_query(name: str, field) -> None:
    """400 for a query value holding a NUL (%00): PostgreSQL refuses NUL in a text parameter, so a
    filter passing it on was a 500 there (and matched nothing on SQLite); no valid value has one."""
    code = field.metadata.get("error_code", "invalid_query")
    raise ApiError(400, code, f"{name}: contains a NUL character (invalid text).", param=name)


def refuse_unstorable(data) -> None:
    """400 invalid_field naming the top-level field of a string that a backend cannot store: SQLite
    refuses unpaired surrogates, PostgreSQL refuses NUL. Refused on both, so a request accepted on
    one backend is accepted on the other."""
    bad = unstorable_path(data, SURROGATE)
    if bad is not None:
        raise ApiError(
            400, "invalid_field", f"{bad}: contains an unpaired surrogate (invalid text).", param=bad
        )
    bad = unstorable_path(data, NUL)
    if bad is not None:
        raise ApiError(400, "invalid_field", f"{bad}: contains a NUL character (invalid text).", param=bad)


def unstorable_path(value, pattern: re.Pattern, top: str | None = None) -> str | None:
    """The top-level field holding a string (or a key) that matches `pattern`, if any."""
    if isinstance(value, str):
        return top if pattern.search(value) else None
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = ((top, item) for item in value)
    else:
        return None
    for key, item in items:
        name = top if top is not None else str(key)
        if isinstance(key, str) and pattern.search(key):
            return name
        found = unstorable_path(item, pattern, name)
        if found is not None:
            return found
    return None


def _first_message(messages) -> str:
    while isinstance(messages, (list, dict)) and messages:
        messages = messages[0] if isinstance(messages, list) else next(iter(messages.values()))
    return str(messages) if messages else "Invalid value."


def _field_by_key(schema, key):
    for name, field in schema.fields.items():
        if (field.data_key or name) == key:
            return field
    return None


def validation_error(messages: dict, schema) -> ApiError:
    """The first failure of a marshmallow error dict as an ApiError."""
    location, errors = next(iter(messages.items()))
    if not isinstance(errors, dict) or "_schema" in errors:
        return ApiError(400, "invalid_json", "The request body must be a JSON object.")
    param = next((key for key in _declared_order(schema) if key in errors), next(iter(errors)))
    text = _first_message(errors[param])
    field = _field_by_key(schema, param)
    metadata = field.metadata if field is not None else {}
    if location in ("query", "querystring"):
        code = metadata.get("error_code", "invalid_query")
    elif text == MISSING:
        code = metadata.get("missing_code", "missing_field")
    elif text == INT32_MESSAGE:
        code = metadata.get("error_code", "invalid_value")
    else:
        code = metadata.get("error_code", "invalid_field")
    return ApiError(400, code, f"{param}: {text}", param=param)


def _declared_order(schema):
    return [field.data_key or name for name, field in schema.fields.items()]

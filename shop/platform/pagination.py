"""One keyset paginator for every list: signed, opaque cursors bound to endpoint and query."""

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import date, datetime
from functools import reduce

from flask import current_app, g, request
from peewee import AutoField, BigIntegerField, DateField, DateTimeField, IntegerField

from shop.platform import keyring
from shop.platform.errors import ApiError

IGNORED_PARAMS = ("cursor", "limit")


@dataclass
class Page:
    items: list
    has_more: bool
    next_cursor: str | None

    def envelope(self, **extra) -> dict:
        """The spec's list envelope around the items (the view's response schema dumps them)."""
        return {
            "object": "list",
            "data": self.items,
            "has_more": self.has_more,
            "next_cursor": self.next_cursor,
            **extra,
        }


def _binding() -> str:
    """What a cursor is bound to: the tenant, the path (with its ids: one conversation's messages
    are not another's) and every query parameter but cursor and limit."""
    params = sorted((k, v) for k, vs in request.args.lists() if k not in IGNORED_PARAMS for v in vs)
    tenant = g.tenant.id if "tenant" in g else None
    raw = json.dumps([tenant, request.path, params], separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def _sign(payload: bytes, key: str | None = None) -> str:
    """The cursor's signature under `key` (the current instance key by default)."""
    key = key or keyring.ring(current_app.config).current
    return _b64(hmac.new(key.encode(), b"cursor:" + payload, hashlib.sha256).digest()[:18])


def _signed_by_the_ring(signature: str, payload: bytes) -> bool:
    """Whether a key of the ring signed it: a cursor handed out before a key rotation still works
    until the previous key is retired."""
    keys = keyring.ring(current_app.config).keys
    return any(hmac.compare_digest(signature, _sign(payload, key)) for key in keys)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def encode_cursor(values: list) -> str:
    """A cursor that carries the last row's sort values, bound to this request (tenant, path, filters)."""
    payload = json.dumps([_binding(), [_plain(v) for v in values]], separators=(",", ":")).encode()
    return f"{_b64(payload)}.{_sign(payload)}"


def _plain(value):
    return value.isoformat() if isinstance(value, (date, datetime)) else value


def decode_cursor(cursor: str, fields) -> list:
    """The sort values inside a cursor, checked for signature, binding and types."""
    try:
        body, signature = cursor.split(".")
        payload = _unb64(body)
        if not _signed_by_the_ring(signature, payload):
            raise ValueError("bad signature")
        binding, values = json.loads(payload)
        if binding != _binding() or len(values) != len(fields):
            raise ValueError("bound to another request")
        return [_typed(field, value) for field, value in zip(fields, values, strict=True)]
    except (ValueError, TypeError, json.JSONDecodeError, UnicodeDecodeError):
        raise ApiError(
            400, "invalid_cursor", "The cursor is malformed or belongs to another request.", param="cursor"
        ) from None


def _typed(field, value):
    """A cursor value as the field's Python type; an impossible calendar value raises ValueError."""
    if isinstance(field, DateTimeField):
        stamp = datetime.fromisoformat(value)
        if stamp.tzinfo is not None:  # stored values are naive UTC
            raise ValueError("not a stored timestamp")
        return stamp
    if isinstance(field, DateField):
        return date.fromisoformat(value)
    if isinstance(field, (IntegerField, AutoField, BigIntegerField)):
        if isinstance(value, bool) or not isinstance(value, int) or not -(2**63) <= value < 2**63:
            raise ValueError("not a stored integer")
        return value
    if not isinstance(value, str):
        raise ValueError("not a string")
    return value


def _after(order, values):
    """WHERE clause for rows strictly after `values` in the given (field, descending) order."""
    clauses = []
    for i, (field, descending) in enumerate(order):
        beyond = field < values[i] if descending else field > values[i]
        equal_before = [order[j][0] == values[j] for j in range(i)]
        clauses.append(reduce(lambda a, b: a & b, equal_before + [beyond]))
    # implied by the OR below, but stated alone it lets the database seek the index to the cursor
    # instead of scanning every row before it (deep pages then cost what the first page costs)
    first, descending = order[0]
    seek = first <= values[0] if descending else first >= values[0]
    return seek & reduce(lambda a, b: a | b, clauses)


def paginate_list(items: list, key: str, field, limit: int, cursor: str | None) -> Page:
    """One page of a list built in memory, ascending by the unique `key` of its items (dicts);
    `field` is the model field whose type the key has, for checking cursors."""
    if cursor:
        after = decode_cursor(cursor, [field])[0]
        items = [item for item in items if item[key] > after]
    has_more = len(items) > limit
    items = items[:limit]
    return Page(items, has_more, encode_cursor([items[-1][key]]) if has_more else None)


def paginate(query, order, limit: int, cursor: str | None) -> Page:
    """One page of `query` in `order` [(field, descending), ...]; the last field must be unique."""
    fields = [field for field, _ in order]
    if cursor:
        query = query.where(_after(order, decode_cursor(cursor, fields)))
    sort = [field.desc() if descending else field.asc() for field, descending in order]
    rows = list(query.order_by(*sort).limit(limit + 1))
    has_more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = None
    if has_more:
        last = rows[-1]
        next_cursor = encode_cursor([getattr(last, field.name) for field in fields])
    return Page(rows, has_more, next_cursor)

"""Idempotency-Key on POST: claim the key, run the view once, save and replay its response."""

import hashlib
import re
from datetime import timedelta

from flask import current_app, g, request
from peewee import IntegrityError

from shop import clock
from shop.db import write_transaction
from shop.models import IdempotencyRecord
from shop.platform import secretbox
from shop.platform.errors import ApiError

KEY_PATTERN = re.compile(r"^[\x21-\x7e]+$")  # visible ASCII, no spaces
HEADER = "Idempotency-Key"


def key_rules(view) -> tuple[int, bool]:
    """(minimum length, required) for a view; rotate_secret asks for 8 and requires the header."""
    return getattr(view, "_idempotency_min_length", 1), getattr(view, "_idempotency_required", False)


def idempotency_key(view) -> str | None:
    """The validated Idempotency-Key of this request, or None when it carries none."""
    key = request.headers.get(HEADER)
    min_length, required = key_rules(view)
    if key is None:
        if required:
            raise ApiError(
                400, "invalid_idempotency_key", f"This endpoint requires an {HEADER} header.", param=HEADER
            )
        return None
    if not (min_length <= len(key) <= 255) or not KEY_PATTERN.match(key):
        raise ApiError(
            400,
            "invalid_idempotency_key",
            f"{HEADER} must be {min_length} to 255 visible ASCII characters without spaces.",
            param=HEADER,
        )
    return key


def fingerprint() -> str:
    """What a retry must repeat exactly: method, path with query, and the raw body."""
    digest = hashlib.sha256(f"{request.method} {request.full_path}\n".encode())
    digest.update(request.get_data(cache=True))
    return digest.hexdigest()


def run(view, dispatch, to_response):
    """Serve a POST through its Idempotency-Key: run it once, replay it after."""
    if request.method != "POST" or not g.get("api_key"):
        return dispatch()
    key = idempotency_key(view)
    if key is None:
        return dispatch()
    record = claim(g.api_key.id, key, fingerprint())
    if record.state == "completed":
        return replay(record)
    return execute(record, dispatch, to_response, getattr(view, "_sensitive_response", False))


def claim(api_key_id: str, key: str, print_: str) -> IdempotencyRecord:
    """The record for this key: a fresh claim, a completed one to replay, or a conflict."""
    config = current_app.config
    now = clock.now()
    lock_until = now + timedelta(seconds=config["IDEMPOTENCY_LOCK_SECONDS"])
    retention = timedelta(seconds=config["IDEMPOTENCY_RETENTION_SECONDS"])
    for _ in range(3):
        try:
            return IdempotencyRecord.create(
                api_key_id=api_key_id, key=key, fingerprint=print_, locked_until=lock_until, created_at=now
            )
        except IntegrityError:
            pass
        record = IdempotencyRecord.get_or_none(api_key_id=api_key_id, key=key)
        if record is None:
            continue
        if record.created_at + retention <= now:
            record.delete_instance()
            continue
        if record.fingerprint != print_:
            raise ApiError(
                409,
                "idempotency_key_reuse",
                "This Idempotency-Key was used with a different request body or URL.",
                param=HEADER,
            )
        if record.state == "completed":
            return record
        if record.locked_until <= now and _take_over(record, lock_until):
            return record
        raise ApiError(
            409,
            "idempotency_in_progress",
            "A request with this Idempotency-Key is still being processed; retry shortly.",
            param=HEADER,
        )
    raise ApiError(409, "idempotency_in_progress", "Retry shortly.", param=HEADER)


def _take_over(record, lock_until) -> bool:
    # the first request died without finishing (its transaction rolled back): run it again
    updated = (
        IdempotencyRecord.update(locked_until=lock_until)
        .where(
            (IdempotencyRecord.id == record.id)
            & (IdempotencyRecord.state == "in_progress")
            & (IdempotencyRecord.locked_until == record.locked_until)
        )
        .execute()
    )
    return updated == 1


def execute(record, dispatch, to_response, sensitive: bool = False):
    """Run the view and save its response in the same transaction as its changes."""
    try:
        with write_transaction():
            response = to_response(dispatch)
            if response.status_code < 400:
                _complete(record, response, sensitive)
                return response
            raise _Discard(response)
    except _Discard as discarded:
        response = discarded.response
    if response.status_code >= 500 or response.status_code == 429:
        record.delete_instance()  # a failure or a limit of the moment: let a retry run it again
    else:
        _complete(record, response)
    return response


def _complete(record, response, sensitive: bool = False) -> None:
    body = response.get_data(as_text=True)
    if sensitive:  # a response that shows a secret (a webhook signing secret) is stored encrypted
        body = secretbox.encrypt(body)
    (
        IdempotencyRecord.update(
            state="completed",
            status_code=response.status_code,
            body=body,
            content_type=response.content_type,
            request_id=g.get("request_id"),
        )
        .where(IdempotencyRecord.id == record.id)
        .execute()
    )


def replay(record):
    """The saved response, marked as a replay, under the request id of the request that ran.

    A saved error body names that request's id; answering under the same X-Request-Id keeps the
    spec's rule that the error body's request_id repeats the header.
    """
    if record.request_id:
        g.request_id = record.request_id
    body = record.body
    if body.startswith(secretbox.PREFIX):
        body = secretbox.decrypt(body)
    response = current_app.response_class(body, status=record.status_code, content_type=record.content_type)
    response.headers["Idempotent-Replayed"] = "true"
    return response


class _Discard(Exception):
    """Rolls back a view's changes whose response was an error."""

    def __init__(self, response):
        super().__init__(response.status_code)
        self.response = response

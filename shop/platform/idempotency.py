"""Idempotency-Key on POST: claim the key, run the view once, save and replay its response."""

import hashlib
import re
from datetime import timedelta

from flask import current_app, g, request
from peewee import IntegrityError

from shop import clock
from shop.db import lock_name, named_sql, on_postgres, run_sql, write_transaction
from shop.models import IdempotencyRecord
from shop.platform import secretbox
from shop.platform.errors import ApiError

KEY_PATTERN = re.compile(r"^[\x21-\x7e]+$")  # visible ASCII, no spaces
HEADER = "Idempotency-Key"
TRY_LOCK_SQL = named_sql("SELECT pg_try_advisory_xact_lock(hashtextextended(:name, 0))")


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
    """Serve a POST through its Idempotency-Key: run it once, replay it after.

    The claim of the key, the view's changes and the saved response commit in one transaction: a
    process killed before that COMMIT leaves nothing (the retry runs the request), one killed after
    it leaves the effect and the response together (the retry replays it). A COMMIT whose outcome
    the process never learned (the connection died during it) is answered 503, and the retry finds
    out which of the two it was.
    """
    if request.method != "POST" or not g.get("api_key"):
        return dispatch()
    key = idempotency_key(view)
    if key is None:
        return dispatch()
    api_key_id, print_ = g.api_key.id, fingerprint()
    sensitive = getattr(view, "_sensitive_response", False)
    try:
        return _run_once(api_key_id, key, print_, dispatch, to_response, sensitive)
    except IntegrityError:  # another writer saved the key meanwhile (a process of an earlier release)
        raise _in_progress() from None


def _run_once(api_key_id: str, key: str, print_: str, dispatch, to_response, sensitive: bool):
    try:
        with write_transaction():
            record = claim(api_key_id, key, print_)
            if record is not None and record.state == "completed":
                raise _Replay(record)
            response = to_response(dispatch)
            if response.status_code >= 400:
                raise _Discard(response)  # the view's changes roll back
            _save(record, api_key_id, key, print_, response, sensitive)
            return response
    except _Replay as replayed:
        return replay(replayed.record)
    except _Discard as discarded:
        response = discarded.response
    if response.status_code >= 500 or response.status_code == 429:
        return response  # a failure or a limit of the moment: nothing is saved, a retry runs it again
    try:
        with write_transaction():  # a refusal is the request's answer: a retry gets the same one
            record = claim(api_key_id, key, print_)
            if record is not None and record.state == "completed":
                raise _Replay(record)  # another request with the key answered meanwhile
            _save(record, api_key_id, key, print_, response)
    except _Replay as replayed:
        return replay(replayed.record)
    return response


def claim(api_key_id: str, key: str, print_: str) -> IdempotencyRecord | None:
    """Inside the request's write transaction: the key's record (completed: to replay; in progress:
    an abandoned claim of an earlier release, taken over), None when the key is new, or a 409.

    On SQLite the write transaction already excludes every other writer; on PostgreSQL a
    transaction-scoped advisory lock on the key does, and a second request with the key while the
    first runs is told so (409 idempotency_in_progress) instead of waiting for it.
    """
    config = current_app.config
    now = clock.now()
    if on_postgres():
        taken = run_sql(TRY_LOCK_SQL, {"name": lock_name("idempotency", api_key_id, key)})[0][0]
        if not taken:
            raise _in_progress()
    record = IdempotencyRecord.get_or_none(
        (IdempotencyRecord.api_key_id == api_key_id) & (IdempotencyRecord.key == key)
    )
    if record is None:
        return None
    retention = timedelta(seconds=config["IDEMPOTENCY_RETENTION_SECONDS"])
    if record.created_at + retention <= now:
        record.delete_instance()
        return None
    if record.fingerprint != print_:
        raise ApiError(
            409,
            "idempotency_key_reuse",
            "This Idempotency-Key was used with a different request body or URL.",
            param=HEADER,
        )
    if record.state == "completed":
        return record
    lock_until = now + timedelta(seconds=config["IDEMPOTENCY_LOCK_SECONDS"])
    if record.locked_until <= now and _take_over(record, lock_until):
        return record
    raise _in_progress()


def _in_progress() -> ApiError:
    return ApiError(
        409,
        "idempotency_in_progress",
        "A request with this Idempotency-Key is still being processed; retry shortly.",
        param=HEADER,
    )


def _take_over(record, lock_until) -> bool:
    # a claim left in progress by a process that died (an earlier release committed the claim on
    # its own): its transaction rolled back, so the request runs again
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


def _save(record, api_key_id: str, key: str, print_: str, response, sensitive: bool = False) -> None:
    """The completed record with the response, in the transaction of the request's changes."""
    body = response.get_data(as_text=True)
    if sensitive:  # a response that shows a secret (a webhook signing secret) is stored encrypted
        body = secretbox.encrypt(body)
    now = clock.now()
    saved = {
        "state": "completed",
        "status_code": response.status_code,
        "body": body,
        "content_type": response.content_type,
        "request_id": g.get("request_id"),
        "locked_until": now,
    }
    if record is not None:
        IdempotencyRecord.update(**saved).where(IdempotencyRecord.id == record.id).execute()
        return
    IdempotencyRecord.insert(
        api_key_id=api_key_id, key=key, fingerprint=print_, created_at=now, **saved
    ).execute()


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


class _Replay(Exception):
    """Leaves the claim's transaction, unchanged, to replay a completed record."""

    def __init__(self, record):
        super().__init__(record.id)
        self.record = record


class _Discard(Exception):
    """Rolls back a view's changes whose response was an error."""

    def __init__(self, response):
        super().__init__(response.status_code)
        self.response = response

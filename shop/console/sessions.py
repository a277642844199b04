"""Console sessions: the server-side record a browser's cookie names, its idle expiry and CSRF token."""

import hashlib
import hmac
import secrets
from datetime import timedelta

from shop import clock
from shop.db import write_transaction
from shop.models import ApiKey, ConsoleSession

COOKIE = "shop_console"
IDLE = timedelta(hours=12)
# last_seen_at is written at most this often: a page view is not a database write every time
TOUCH_EVERY = timedelta(minutes=1)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def start(
    tenant_id: str, key: ApiKey | None = None, user_id: int | None = None, replacing: str | None = None
) -> tuple[str, ConsoleSession]:
    """A new session for this key or teammate: the cookie value (shown to the browser only) and the
    record. The session the browser held before (`replacing`, its old cookie value) ends: a sign-in
    always gets a fresh id, so a session id planted before sign-in is worth nothing after it."""
    token = secrets.token_urlsafe(32)
    now = clock.now()
    with write_transaction():
        stale = ConsoleSession.last_seen_at <= now - IDLE
        if replacing and len(replacing) <= 100:
            stale |= ConsoleSession.id == _digest(replacing)
        ConsoleSession.delete().where(stale).execute()
        record = ConsoleSession.create(
            id=_digest(token),
            tenant=tenant_id,
            api_key=key.id if key else None,
            user=user_id,
            csrf_token=secrets.token_urlsafe(32),
            created_at=now,
            last_seen_at=now,
        )
    return token, record


def find(token: str | None) -> ConsoleSession | None:
    """The session this cookie value names, unless idle too long (then it is ended)."""
    if not token or len(token) > 100:
        return None
    record = ConsoleSession.get_or_none(ConsoleSession.id == _digest(token))
    if record is None:
        return None
    now = clock.now()
    if record.last_seen_at <= now - IDLE:
        end(record)
        return None
    if record.last_seen_at <= now - TOUCH_EVERY:
        with write_transaction():
            ConsoleSession.update(last_seen_at=now).where(ConsoleSession.id == record.id).execute()
    return record


def end(record: ConsoleSession) -> None:
    """Sign out: the record is gone, so the cookie names nothing."""
    with write_transaction():
        ConsoleSession.delete().where(ConsoleSession.id == record.id).execute()


def csrf_matches(record: ConsoleSession, sent: str | None) -> bool:
    """Whether a form carried this session's CSRF token (compared in constant time)."""
    if not sent or len(sent) > 100:
        return False
    return hmac.compare_digest(record.csrf_token.encode(), sent.encode())

"""Teammates: staff accounts that sign in to the console with email and password, their roles, and
the per-account limit on failed sign-ins.

Passwords are hashed with werkzeug.security's scrypt (memory-hard, from a library the app already
depends on); a password change or a disabled account ends the teammate's console sessions.
"""

import secrets
import unicodedata
from dataclasses import dataclass, field
from datetime import timedelta

from flask import current_app, has_app_context
from peewee import IntegrityError, fn
from werkzeug.security import check_password_hash, generate_password_hash

from shop import clock
from shop.db import serialize, write_transaction
from shop.domain.keys import SCOPES
from shop.models import ConsoleSession, Tenant, User
from shop.models.tenancy import ROLES
from shop.platform.errors import ApiError, not_found

PASSWORD_MIN, PASSWORD_MAX = 12, 200
NAME_MAX, EMAIL_MAX = 255, 320
# werkzeug's scrypt at its default cost (n=2**15, r=8, p=1: 32 MiB a check); the setting
# PASSWORD_HASH_METHOD may name another werkzeug method (tests use a cheaper scrypt)
HASH_METHOD = "scrypt"
# what the console's owner-only pages need: a staff teammate never holds these
OWNER_SCOPES = ("webhooks.read", "webhooks.write", "webhooks.manage")
_dummy_hashes: dict[str, str] = {}


@dataclass(frozen=True)
class Teammate:
    """A signed-in teammate as the console sees it: like a key, it has an id (its rate-limit bucket
    and log name), a tenant and scopes (its tenant's console: all of them, the owner ones for owners)."""

    user_id: int
    email: str
    name: str | None
    role: str
    tenant: Tenant = field(compare=False)

    @property
    def id(self) -> str:
        return f"teammate_{self.user_id}"

    @property
    def is_owner(self) -> bool:
        return self.role == "owner"

    @property
    def scopes(self) -> list[str]:
        return [s for s in SCOPES if self.is_owner or s not in OWNER_SCOPES]


def teammate_of(user: User, tenant: Tenant) -> Teammate:
    """The console's view of a teammate row."""
    return Teammate(user.id, user.email, user.name, user.role, tenant)


def hash_method() -> str:
    """The configured werkzeug hash method (scrypt by default)."""
    return current_app.config.get("PASSWORD_HASH_METHOD", HASH_METHOD) if has_app_context() else HASH_METHOD


def hash_password(password: str) -> str:
    """The stored form of a password."""
    return generate_password_hash(password, method=hash_method())


def _dummy_hash() -> str:
    """Checked when no account has the email, so an unknown address costs what a wrong password does."""
    method = hash_method()
    if method not in _dummy_hashes:
        _dummy_hashes[method] = generate_password_hash(secrets.token_urlsafe(16), method=method)
    return _dummy_hashes[method]


def check_password(password: str, errors_param: str = "password") -> str:
    """A password's length rules (the CLI's and the fixture's): 400 with `param` when broken."""
    if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX or "\x00" in password:
        raise ApiError(
            400,
            "invalid_field",
            f"A password has {PASSWORD_MIN} to {PASSWORD_MAX} characters (no NUL).",
            param=errors_param,
        )
    return password


def create_teammate(
    tenant_id: str, email: str, name: str | None = None, role: str = "staff", password: str | None = None
) -> tuple[User, str]:
    """Add a teammate; returns the row and its password (generated unless given: shown this once)."""
    if role not in ROLES:
        raise ApiError(400, "invalid_field", f"role must be one of {', '.join(ROLES)}.", param="role")
    email, name = check_email(email), check_name(name)
    password = check_password(password or secrets.token_urlsafe(18))
    with write_transaction():
        if Tenant.get_or_none(Tenant.id == tenant_id) is None:
            raise not_found("tenant", tenant_id, "tenant")
        if _account(tenant_id, email) is not None:
            raise ApiError(409, "conflict", f"{email} is already a teammate of {tenant_id}.", param="email")
        try:
            user = User.create(
                tenant=tenant_id, email=email, name=name, role=role, password_hash=hash_password(password)
            )
        except IntegrityError:
            raise ApiError(409, "conflict", f"{email} is already a teammate.", param="email") from None
    return user, password


def set_password(tenant_id: str, email: str, password: str) -> User:
    """A new password: the teammate's console sessions end and the failed sign-ins are forgotten."""
    hashed = hash_password(check_password(password))
    with write_transaction():
        user = _existing(tenant_id, email)
        user.password_hash, user.failed_sign_ins, user.failed_sign_in_at = hashed, 0, None
        user.save()
        end_sessions(user.id)
    return user


def disable_teammate(tenant_id: str, email: str, keep_an_owner: bool = False) -> User:
    """The teammate can no longer sign in; its sessions end now. With `keep_an_owner` (the console)
    the shop's last enabled owner is refused (409 last_owner): someone must be left to manage it."""
    with write_transaction():
        user = _existing(tenant_id, email)
        if keep_an_owner:
            _refuse_the_last_owner(user, "disable")
        user.disabled = True
        user.save()
        end_sessions(user.id)
    return user


def set_role(tenant_id: str, email: str, role: str, keep_an_owner: bool = False) -> User:
    """A teammate's new role (owner or staff), in force from its next request; with `keep_an_owner`
    (the console) demoting the shop's last enabled owner is refused (409 last_owner)."""
    if role not in ROLES:
        raise ApiError(400, "invalid_field", f"role must be one of {', '.join(ROLES)}.", param="role")
    with write_transaction():
        user = _existing(tenant_id, email)
        if keep_an_owner and role != "owner":
            _refuse_the_last_owner(user, "demote")
        if user.role != role:
            user.role = role
            user.save()
    return user


def _refuse_the_last_owner(user: User, doing: str) -> None:
    """409 when `user` is its shop's only enabled owner (inside the caller's write transaction; on
    PostgreSQL two owners demoting each other at once are serialized by the shop's owners lock)."""
    serialize("owners", user.tenant_id)
    if user.role != "owner" or user.disabled:
        return
    others = (
        User.for_tenant(user.tenant_id)
        .where((User.role == "owner") & (User.disabled == False) & (User.id != user.id))  # noqa: E712
        .count()
    )
    if not others:
        raise ApiError(
            409,
            "last_owner",
            f"Cannot {doing} the shop's last active owner: make another teammate an owner first.",
            param="role" if doing == "demote" else "user_id",
        )


def teammate_by_id(tenant_id: str, user_id: int) -> User:
    """One teammate of this shop by id: another shop's teammate, or no such id, is the same 404."""
    user = User.for_tenant(tenant_id).where(User.id == user_id).first()
    if user is None:
        raise not_found("teammate", user_id, "user_id")
    return user


def end_sessions(user_id: int) -> int:
    """Every console session of this teammate (inside the caller's transaction)."""
    return ConsoleSession.delete().where(ConsoleSession.user == user_id).execute()


def list_teammates(tenant_id: str) -> list[User]:
    """The shop's teammates by email (the owners' Teammates page)."""
    return list(User.for_tenant(tenant_id).order_by(User.email))


def check_email(email: str) -> str:
    email = (email or "").strip()
    if not 3 <= len(email) <= EMAIL_MAX or "@" not in email or _has_control(email):
        raise ApiError(400, "invalid_field", "Not an email address.", param="email")
    return email


def check_name(name: str | None) -> str | None:
    """A teammate's display name: optional, at most 255 characters, no control characters."""
    name = (name or "").strip()
    if len(name) > NAME_MAX or _has_control(name):
        raise ApiError(
            400,
            "invalid_field",
            f"A name has at most {NAME_MAX} characters and no control characters.",
            param="name",
        )
    return name or None


def _has_control(text: str) -> bool:
    """NUL, newlines, escapes and the other control characters (Unicode category Cc)."""
    return any(unicodedata.category(c) == "Cc" for c in text)


def _account(tenant_id: str, email: str) -> User | None:
    return User.for_tenant(tenant_id).where(fn.LOWER(User.email) == email.lower()).first()


def _existing(tenant_id: str, email: str) -> User:
    user = _account(tenant_id, check_email(email))
    if user is None:
        raise not_found("teammate", email, "email")
    return user


@dataclass(frozen=True)
class SignInLimit:
    """Failed sign-ins an account may have within `window` before it is refused until the window ends."""

    failures: int
    window: timedelta


def verify_sign_in(
    email: str, password: str, limit: SignInLimit, tenant_id: str | None = None
) -> User | None:
    """The enabled account this email and password open (within `tenant_id` when given), or None.

    A wrong password counts against every account with the email; an account over its limit is
    refused (429) even with the right password until its window has passed. An email on several
    shops whose password opens more than one needs the shop named (400 on `shop`)."""
    candidates = [u for u in _candidates(email, tenant_id) if not u.disabled and u.password_hash]
    now = clock.now()
    locked = [u for u in candidates if _over_limit(u, limit, now)]
    if locked:
        raise ApiError(
            429,
            "rate_limited",
            "Too many failed sign-ins for this account; try again later.",
            headers={"Retry-After": str(_retry_after(locked, limit, now))},
        )
    matched = [u for u in candidates if check_password_hash(u.password_hash, password)]
    if not candidates:
        check_password_hash(_dummy_hash(), password)  # the same time as a wrong password
    if not matched:
        _count_failures(candidates, limit, now)
        return None
    if len(matched) > 1:
        raise ApiError(
            400,
            "invalid_field",
            "This email is a teammate of several shops: type the shop's id.",
            param="shop",
        )
    user = matched[0]
    if user.failed_sign_ins:
        with write_transaction():
            User.update(failed_sign_ins=0, failed_sign_in_at=None).where(User.id == user.id).execute()
    return user


def _candidates(email: str, tenant_id: str | None) -> list[User]:
    query = User.select().where(fn.LOWER(User.email) == email.strip().lower())
    if tenant_id is not None:
        query = User.for_tenant(tenant_id).where(fn.LOWER(User.email) == email.strip().lower())
    return list(query.limit(20))


def _over_limit(user: User, limit: SignInLimit, now) -> bool:
    started = user.failed_sign_in_at
    return started is not None and now - started < limit.window and user.failed_sign_ins >= limit.failures


def _retry_after(users: list[User], limit: SignInLimit, now) -> int:
    ends = max(u.failed_sign_in_at + limit.window for u in users)
    return max(1, int((ends - now).total_seconds()) + 1)


def _count_failures(users: list[User], limit: SignInLimit, now) -> None:
    """One more failure in each account's window (a window that has passed starts again at one)."""
    if not users:
        return
    with write_transaction():
        for user in users:
            fresh = user.failed_sign_in_at is None or now - user.failed_sign_in_at >= limit.window
            changes = (
                {"failed_sign_ins": 1, "failed_sign_in_at": now}
                if fresh
                else {"failed_sign_ins": User.failed_sign_ins + 1}
            )
            User.update(**changes).where(User.id == user.id).execute()


def live_teammate(user_id: int) -> Teammate | None:
    """The session's teammate, if its account is still enabled (the console reads it every request)."""
    user = User.select(User, Tenant).join(Tenant).where(User.id == user_id).first()
    if user is None or user.disabled:
        return None
    return teammate_of(user, user.tenant)

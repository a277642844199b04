"""Authentication: per-address failure limit, key lookup, the key's bucket, tenant gates, scope."""

import hashlib
import hmac

from flask import current_app, g, request

from shop import clock
from shop.db import named_sql, on_postgres, run_sql
from shop.models import ApiKey, Tenant
from shop.models.tenancy import PLANS_WITH_API
from shop.platform import auth_failures, ratelimit
from shop.platform.auth_failures import blocked_addresses
from shop.platform.errors import ApiError
from shop.platform.ratelimit import Take

BILLING_OK = ("active", "trialing")
BILLING_INACTIVE = ("canceled", "unpaid")


def hash_token(token: str) -> str:
    """The stored form of an API key: its SHA-256 hex digest."""
    return hashlib.sha256(token.encode()).hexdigest()


def view_function():
    """The function that will serve this request (the method of a MethodView included)."""
    func = current_app.view_functions.get(request.endpoint)
    view_class = getattr(func, "view_class", None)
    if view_class is None:
        return func
    method = "get" if request.method == "HEAD" else request.method.lower()
    return getattr(view_class, method, None)


def authenticate() -> None:
    """before_request: verify the key and everything that gates it, in the spec's order."""
    view = g.view = view_function()  # dispatch reuses it for the Idempotency-Key rules
    if view is None or getattr(view, "_public", False):
        return
    if request.blueprint == "console":  # signed in by its session cookie instead (shop/console/guard.py)
        return
    refuse_blocked_address()
    key, taken = find_key_and_take(_bearer_token(), *_bucket_settings())
    if key is None:
        record_failure()
        raise ApiError(
            401,
            "unauthorized",
            "Missing, malformed, revoked or expired API key.",
            headers={"WWW-Authenticate": www_authenticate()},
        )
    admit(key, getattr(view, "_required_scope", None), ungated=getattr(view, "_ungated", False), taken=taken)


def admit(key: ApiKey, required_scope: str | None, ungated: bool = False, taken: Take | None = None) -> None:
    """A verified key's gates: its rate-limit bucket (unless already `taken` with the key's lookup),
    the tenant, the scope (the console's too)."""
    g.api_key, g.tenant = key, key.tenant
    if taken is None:
        taken = ratelimit.take(key.id, *_bucket_settings())
    g.rate_headers = taken.headers()
    if not taken.granted:
        raise ApiError(429, "rate_limited", "Too many requests for this API key; retry later.")
    g.usage_loggable = True
    check_tenant(key.tenant, ungated=ungated)
    check_scope(key, required_scope)


def _bucket_settings() -> tuple[int, float]:
    """The token bucket's capacity and refill per second."""
    config = current_app.config
    return int(config["RATE_LIMIT_CAPACITY"]), float(config["RATE_LIMIT_REFILL"])


def www_authenticate() -> str:
    """The challenge of a 401 (RFC 6750 section 3): an error code only when a Bearer token was sent."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():  # no credentials, or not ours: a bare challenge
        return 'Bearer realm="api"'
    return 'Bearer realm="api", error="invalid_token"'


def _bearer_token() -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip() or len(token) > 200:
        return None
    return token.strip()


FIND_KEY_SQL = named_sql(
    f"SELECT {ApiKey.columns('k')}, {Tenant.columns('t')} FROM api_key AS k "
    "JOIN tenant AS t ON t.id = k.tenant_id WHERE k.token_hash = :digest"
)


# PostgreSQL: the key lookup and its bucket's take in one statement (one round trip instead of two);
# the take's subquery has find_key's rule, so a token is taken only from a live key's bucket
FIND_KEY_AND_TAKE_SQL = named_sql(
    "WITH taken AS ("
    + ratelimit.take_sql(
        "(SELECT id FROM api_key WHERE token_hash = :digest AND NOT revoked "
        "AND (expires_at IS NULL OR expires_at > :moment))"
    )
    + f") SELECT {ApiKey.columns('k')}, {Tenant.columns('t')}, taken.tokens, taken.granted "
    "FROM api_key AS k JOIN tenant AS t ON t.id = k.tenant_id LEFT JOIN taken ON TRUE "
    "WHERE k.token_hash = :digest"
)


def find_key_and_take(token: str | None, capacity: int, refill: float) -> tuple[ApiKey | None, Take | None]:
    """The live key with this token and a token taken from its bucket; (None, None) for no live key."""
    if not token:
        return None, None
    if not on_postgres():
        key = find_key(token)
        return key, (ratelimit.take(key.id, capacity, refill) if key else None)
    moment, digest = clock.now(), hash_token(token)
    params = {**ratelimit.take_params(capacity, refill), "digest": digest, "moment": moment}
    rows = run_sql(FIND_KEY_AND_TAKE_SQL, params)
    key = _live_key(rows[0][:-2], digest, moment) if rows else None
    if key is None:
        return None, None
    tokens, granted = rows[0][-2:]
    if tokens is None:  # the key's first request: no bucket yet
        return key, ratelimit.take(key.id, capacity, refill)
    return key, Take(bool(granted), float(tokens), capacity, refill)


def find_key(token: str | None) -> ApiKey | None:
    """The live (unrevoked, unexpired) key with this token, compared in constant time."""
    if not token:
        return None
    digest = hash_token(token)
    rows = run_sql(FIND_KEY_SQL, {"digest": digest})
    return _live_key(rows[0], digest) if rows else None


FIND_KEY_BY_ID_SQL = named_sql(
    f"SELECT {ApiKey.columns('k')}, {Tenant.columns('t')} FROM api_key AS k "
    "JOIN tenant AS t ON t.id = k.tenant_id WHERE k.id = :key_id"
)


def live_key_by_id(key_id: str) -> ApiKey | None:
    """The key with this id (the console's session holds the id, never the token), if still live."""
    rows = run_sql(FIND_KEY_BY_ID_SQL, {"key_id": key_id})
    return _live_key(rows[0]) if rows else None


def _live_key(row, digest: str | None = None, moment=None) -> ApiKey | None:
    """The key (with its tenant) of a FIND_KEY_SQL row, if it is live at `moment` (now) and, when a
    token's digest is given, its hash matches in constant time."""
    split = len(ApiKey._meta.sorted_fields)
    key = ApiKey.from_row(row[:split])
    key.tenant = Tenant.from_row(row[split:])
    if digest is not None and not hmac.compare_digest(key.token_hash, digest):
        return None
    if key.revoked or (key.expires_at is not None and key.expires_at <= (moment or clock.now())):
        return None
    return key


def check_tenant(tenant: Tenant, ungated: bool = False) -> None:
    """Suspension, then plan, then billing status (the usage endpoint skips all three)."""
    if ungated:
        return
    if tenant.suspended:
        raise ApiError(503, "tenant_suspended", "This account is suspended.")
    if tenant.plan not in PLANS_WITH_API:
        raise ApiError(
            402,
            "upgrade_required",
            "Your plan does not include API access.",
            details={
                "required_plan": PLANS_WITH_API[0],
                "current_plan": tenant.plan,
                "upgrade_url": current_app.config["UPGRADE_URL"],
            },
        )
    if tenant.billing_status in BILLING_INACTIVE:
        raise ApiError(
            402,
            "billing_subscription_required",
            "The subscription is not active.",
            details={
                "billing_required": True,
                "reason": "subscription_inactive",
                "subscription_status": tenant.billing_status,
                "current_period_end": clock.isoformat(tenant.current_period_end),
            },
        )
    if tenant.billing_status not in BILLING_OK:
        raise ApiError(
            402,
            "payment_required",
            "A payment is needed before API access resumes.",
            details={"subscription_status": tenant.billing_status},
        )


def check_scope(key: ApiKey, required: str | None) -> None:
    """403 insufficient_scope unless the key holds the view's scope."""
    if required and required not in key.scopes:
        raise ApiError(
            403,
            "insufficient_scope",
            f"This API key lacks the {required} scope.",
            details={"required_scope": required},
        )


def refuse_blocked_address() -> None:
    """429 for an address with too many failed authentications this minute."""
    limit = int(current_app.config["AUTH_FAILURES_PER_MINUTE"])
    if blocked_addresses.is_blocked(client_address(), limit):
        raise ApiError(
            429,
            "rate_limited",
            "Too many failed authentications from this address.",
            headers={"Retry-After": str(auth_failures.retry_after())},
        )


def record_failure() -> None:
    """Count a failed authentication (a bad key, or a console sign-in) against this address."""
    blocked_addresses.record(client_address(), int(current_app.config["AUTH_FAILURES_PER_MINUTE"]))


def client_address() -> str:
    """The client's address: the peer's, or the one trusted proxies forwarded (shop.platform.proxies)."""
    return (request.remote_addr or "unknown")[:64]

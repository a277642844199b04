"""One webhook POST: resolve the host, screen every address, connect to the vetted one by IP.

TLS is still verified against the hostname (SNI and certificate name), redirects are never
followed, and the whole attempt has one deadline.
"""

import ipaddress
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import certifi
import urllib3
from urllib3.exceptions import ConnectTimeoutError, HTTPError, NewConnectionError, ReadTimeoutError

from shop.domain.webhooks.destinations import literal_address, screen_address

BLOCKED_TARGET = "blocked target: hostname resolves to a private or reserved IP address"
BODY_BYTES = 2048  # the attempt log keeps the first 2 KB of a response body
EXCERPT_CHARS = 500  # the delivery keeps a shorter excerpt of the last one
USER_AGENT = "RepairShop-Webhooks/1"
# response headers the attempt log keeps: useful for debugging, never a cookie or a credential
SAFE_RESPONSE_HEADERS = ("content-type", "content-length", "content-encoding", "date", "retry-after",
                         "location", "server", "x-request-id", "request-id", "x-correlation-id")


class Blocked(Exception):
    """The destination resolves to an address the service must not reach (permanent)."""


class NetworkError(Exception):
    """A failure the next attempt may not have: DNS, connection, TLS, timeout (retryable)."""

    address: str | None = None  # the vetted address the attempt connected to, once known


@dataclass(frozen=True)
class Reply:
    status: int
    body: str  # the first BODY_BYTES of the response, as text
    ms: int
    address: str
    headers: dict

    @property
    def excerpt(self) -> str:
        return self.body[:EXCERPT_CHARS]


def vetted_address(host: str, port: int, trusted_networks=()) -> str:
    """The address to connect to; raises Blocked if any A/AAAA answer is private or reserved."""
    literal = literal_address(host)
    if literal is not None:
        addresses = [literal]
    else:
        try:
            answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as error:
            raise NetworkError(f"dns: {getattr(error, 'strerror', None) or error}") from None
        addresses = list(dict.fromkeys(ipaddress.ip_address(a[4][0].split("%")[0]) for a in answers))
    if not addresses:
        raise NetworkError("dns: no address for the host")
    if any(screen_address(address, trusted_networks) for address in addresses):
        raise Blocked(BLOCKED_TARGET)
    return str(addresses[0])


def post(url: str, body: bytes, headers: dict, timeout: float, ca_bundle: str | None = None,
         trusted_networks=()) -> Reply:
    """POST the raw body to the vetted address of `url`; raises Blocked or NetworkError."""
    parts = urlsplit(url)
    host = parts.hostname.rstrip(".")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    address = vetted_address(host, port, trusted_networks)
    try:
        return _send(parts, host, port, address, body, headers, timeout, ca_bundle)
    except NetworkError as error:
        error.address = address
        raise


def _send(parts, host: str, port: int, address: str, body: bytes, headers: dict, timeout: float,
          ca_bundle: str | None) -> Reply:
    """POST to the vetted address over this thread's kept connection to it."""
    pool = _pool(parts.scheme, host, address, port, timeout, ca_bundle)
    deadline = urllib3.Timeout(total=timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    started = time.perf_counter()
    try:
        response = pool.urlopen("POST", target, body=body, redirect=False, retries=False,
                                preload_content=False, timeout=deadline,
                                headers={**headers, "Host": netloc, "User-Agent": USER_AGENT})
        excerpt = response.read(BODY_BYTES, decode_content=False) or b""
        if response.read(1, decode_content=False):  # more than we keep: never reuse a half-read connection
            _forget(pool)
        else:
            response.release_conn()
    except NewConnectionError as error:  # urllib3 files it under ConnectTimeoutError; nothing timed out
        _forget(pool)
        raise NetworkError(f"network error: {_describe(error.__cause__ or error)}") from None
    except (ReadTimeoutError, ConnectTimeoutError, TimeoutError):
        raise NetworkError("timeout") from None
    except (HTTPError, OSError) as error:
        _forget(pool)
        reason = _describe(error)
        raise NetworkError(reason if reason == "timeout" else f"network error: {reason}") from None
    ms = int((time.perf_counter() - started) * 1000)
    kept = {name: value for name, value in response.headers.items() if name.lower() in SAFE_RESPONSE_HEADERS}
    return Reply(response.status, excerpt.decode("utf-8", "replace"), ms, address, kept)


# each worker thread keeps its keep-alive connections, per vetted address: the name is still
# resolved and screened before every attempt, and a connection is reused only to the same address
_pools = threading.local()
IDLE_SECONDS = 30


def _pool(scheme: str, host: str, address: str, port: int, timeout: float, ca_bundle: str | None):
    key = (scheme, host, address, port, ca_bundle)
    pools = getattr(_pools, "by_key", None)
    if pools is None:
        pools = _pools.by_key = {}
    now = time.monotonic()
    for stale in [k for k, (_, used) in pools.items() if now - used > IDLE_SECONDS]:
        pools.pop(stale)[0].close()
    if key in pools:
        pools[key] = (pools[key][0], now)
        return pools[key][0]
    if scheme == "https":
        pool = urllib3.HTTPSConnectionPool(address, port, maxsize=1, retries=False, server_hostname=host,
                                           assert_hostname=host, cert_reqs="CERT_REQUIRED",
                                           ca_certs=ca_bundle or certifi.where())
    else:
        pool = urllib3.HTTPConnectionPool(address, port, maxsize=1, retries=False)
    pools[key] = (pool, now)
    return pool


def _forget(pool) -> None:
    """Drop a pool after a failure, so the next attempt starts from a new connection."""
    pools = getattr(_pools, "by_key", {})
    for key in [k for k, (p, _) in pools.items() if p is pool]:
        pools.pop(key)
    pool.close()


def _describe(error: Exception) -> str:
    """A short reason without the URL (kept out of error strings on purpose)."""
    reason = getattr(error, "reason", None) or error
    text = str(reason)
    if "timed out" in text.lower():
        return "timeout"
    return f"{type(reason).__name__}: {text}"[:300]

"""One webhook POST: resolve the host, screen every address, connect to the vetted one by IP.

TLS is still verified against the hostname (SNI and certificate name), redirects are never
followed, and the whole attempt has one deadline. The HTTP/1.1 exchange is written here on a
plain socket rather than through urllib3: a webhook POST needs one request line, a few headers,
a status, the headers and at most 2 KB of body, and urllib3 and http.client spent five times the
CPU of the rest of an attempt's transport doing it (docs/performance.md, Webhooks).
"""

import ipaddress
import re
import select
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, urlsplit

import certifi

from shop.domain.webhooks.destinations import literal_address, screen_address

# what stays as it is in a request target: the reserved and unreserved characters and %; everything
# else (non-ASCII, spaces, quotes) is percent-encoded as UTF-8, as browsers and urllib3 send it
TARGET_SAFE = "/?#[]@!$&'()*+,;=:%-._~"
UNSAFE_FIELD = re.compile(r"[\r\n\0]")
BLOCKED_TARGET = "blocked target: hostname resolves to a private or reserved IP address"
BODY_BYTES = 2048  # the attempt log keeps the first 2 KB of a response body
EXCERPT_CHARS = 500  # the delivery keeps a shorter excerpt of the last one
USER_AGENT = "RepairShop-Webhooks/1"
# response headers the attempt log keeps: useful for debugging, never a cookie or a credential
SAFE_RESPONSE_HEADERS = (
    "content-type",
    "content-length",
    "content-encoding",
    "date",
    "retry-after",
    "location",
    "server",
    "x-request-id",
    "request-id",
    "x-correlation-id",
)


class Blocked(Exception):
    """The destination resolves to an address the service must not reach (permanent)."""


class NetworkError(Exception):
    """A failure the next attempt may not have: DNS, connection, TLS, timeout (retryable)."""

    def __init__(self, message: str, address: str | None = None):
        super().__init__(message)
        self.address = address  # the vetted address the attempt connected to, once known


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


def post(
    url: str, body: bytes, headers: dict, timeout: float, ca_bundle: str | None = None, trusted_networks=()
) -> Reply:
    """POST the raw body to the vetted address of `url`; raises Blocked or NetworkError."""
    parts = urlsplit(url)
    host = parts.hostname.rstrip(".")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    address = vetted_address(host, port, trusted_networks)
    named = f"[{host}]" if ":" in host else host  # an IPv6 literal keeps its brackets in Host
    netloc = named if parts.port is None else f"{named}:{parts.port}"
    try:
        request = _request_bytes(_target(parts.path, parts.query), netloc, headers, body)
    except ValueError as error:
        raise NetworkError(f"network error: {error}", address) from None
    deadline = time.monotonic() + timeout
    started = time.perf_counter()
    key = (parts.scheme, host, address, port, ca_bundle)
    connection = None
    try:
        connection = _connection(key, deadline)
        status, response_headers, excerpt = connection.exchange(request, deadline)
    except TimeoutError:
        _drop(connection)
        raise NetworkError("timeout", address) from None
    except (OSError, ProtocolError, ValueError) as error:
        _drop(connection)
        raise NetworkError(f"network error: {_describe(error)}", address) from None
    if not connection.reusable:  # half-read or closing: the next attempt starts a new connection
        _drop(connection)
    ms = int((time.perf_counter() - started) * 1000)
    kept = {name: value for name, value in response_headers if name.lower() in SAFE_RESPONSE_HEADERS}
    return Reply(status, excerpt.decode("utf-8", "replace"), ms, address, kept)


@lru_cache(maxsize=256)
def _target(path: str, query: str) -> str:
    """The request target of a URL's path and query, percent-encoded to ASCII."""
    return quote((path or "/") + (f"?{query}" if query else ""), safe=TARGET_SAFE)


def _request_bytes(target: str, netloc: str, headers: dict, body: bytes) -> bytes:
    """The request line, headers and body as one buffer: one send, one segment for small bodies.

    A line break or NUL in any field would split the request (header injection): refused. The
    target is percent-encoded ASCII and the header values are ours, so this never fires today.
    """
    fields = [target, netloc, *headers, *(str(value) for value in headers.values())]
    if any(UNSAFE_FIELD.search(field) for field in fields):
        raise ValueError("a request field holds a line break or NUL")
    lines = [
        f"POST {target} HTTP/1.1",
        f"Host: {netloc}",
        f"User-Agent: {USER_AGENT}",
        f"Content-Length: {len(body)}",
    ]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class ProtocolError(Exception):
    """The peer's answer is not HTTP/1.x as a webhook receiver must speak it."""


# each worker thread keeps one keep-alive connection per vetted address: the name is still
# resolved and screened before every attempt, and a connection is reused only to the same address
_connections = threading.local()
IDLE_SECONDS = 30
MAX_HEADER_BYTES = 64 * 1024
NO_BODY_STATUSES = (204, 304)
CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")


class Connection:
    """One TCP (or TLS) connection to a vetted address and the bytes read ahead on it."""

    def __init__(self, sock: socket.socket):
        self.sock, self.buffer, self.used, self.reusable = sock, b"", time.monotonic(), False

    def exchange(self, request: bytes, deadline: float) -> tuple[int, list, bytes]:
        """Send the request; the final status, the headers and the first BODY_BYTES of the body.

        Leaves the connection reusable only when the whole response was read and the peer keeps it.
        """
        self.sock.settimeout(_remaining(deadline))
        self.sock.sendall(request)
        status, version, headers = self._head(deadline)
        while 100 <= status < 200:  # an interim answer (103 Early Hints): the real one follows
            status, version, headers = self._head(deadline)
        body, complete = self._body(status, headers, deadline)
        closing = any(n.lower() == "connection" and "close" in v.lower() for n, v in headers)
        self.reusable = complete and version == "HTTP/1.1" and not closing and not self.buffer
        self.used = time.monotonic()
        return status, headers, body

    def _head(self, deadline: float) -> tuple[int, str, list]:
        """The status line and header fields of one response (lines may end in a bare LF)."""
        while True:
            end = _head_end(self.buffer)
            if end is not None:
                break
            if len(self.buffer) > MAX_HEADER_BYTES:
                raise ProtocolError("response headers too large")
            self._fill(deadline)
        head, self.buffer = self.buffer[: end[0]], self.buffer[end[1] :]
        status_line, *lines = head.decode("latin-1").replace("\r\n", "\n").split("\n")
        version, _, rest = status_line.partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not (code.isascii() and code.isdigit()):
            raise ProtocolError("not an HTTP/1.x status line")
        headers = [
            (name.strip(), value.strip()) for name, _, value in (line.partition(":") for line in lines)
        ]
        return int(code), version, headers

    def _body(self, status: int, headers: list, deadline: float) -> tuple[bytes, bool]:
        """Up to BODY_BYTES of the body, and whether the connection may carry another request
        (the whole body read, its length unambiguous)."""
        if status in NO_BODY_STATUSES:
            return b"", True
        codings = [
            v.strip().lower()
            for n, value in headers
            if n.lower() == "transfer-encoding"
            for v in value.split(",")
        ]
        lengths = {value for name, value in headers if name.lower() == "content-length"}
        if codings:  # Transfer-Encoding wins over any Content-Length (RFC 9112, 6.3)
            if codings[-1] != "chunked":  # the body runs until the peer closes
                return self._take(BODY_BYTES, deadline, until_close=True), False
            body, complete = self._chunked(deadline)
            return body, complete and not lengths  # both framings sent: do not trust this connection again
        if not lengths:  # the body runs until the peer closes
            return self._take(BODY_BYTES, deadline, until_close=True), False
        if len(lengths) > 1:
            raise ProtocolError("conflicting Content-Length headers")
        length = lengths.pop()
        if not (length.isascii() and length.isdigit()):
            raise ProtocolError("bad Content-Length")
        wanted = int(length)
        body = self._take(min(wanted, BODY_BYTES), deadline)
        return body, wanted <= BODY_BYTES

    def _chunked(self, deadline: float) -> tuple[bytes, bool]:
        """A chunked body, read while it fits BODY_BYTES; whole means the last chunk was read."""
        body = b""
        while True:
            size_line = self._line(deadline).split(b";", 1)[0].strip()
            if not CHUNK_SIZE.fullmatch(size_line):  # hex digits only: no sign, no 0x, no blank
                raise ProtocolError("bad chunk size")
            size = int(size_line, 16)
            if size == 0:
                while self._line(deadline):  # trailers, up to the blank line
                    pass
                return body, True
            if len(body) + size > BODY_BYTES:
                return (body + self._take(BODY_BYTES - len(body), deadline)), False
            body += self._take(size, deadline)
            if self._line(deadline):  # the chunk's data ends with its own line break
                raise ProtocolError("chunk longer than its size")

    def _line(self, deadline: float) -> bytes:
        """The next line of a chunked body, without its CRLF (or bare LF)."""
        while b"\n" not in self.buffer:
            if len(self.buffer) > MAX_HEADER_BYTES:
                raise ProtocolError("line too long")
            self._fill(deadline)
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.removesuffix(b"\r")

    def _take(self, count: int, deadline: float, until_close: bool = False) -> bytes:
        """`count` bytes of the body (fewer when the peer closes first and that is allowed)."""
        while len(self.buffer) < count:
            if not self._fill(deadline, eof_ok=until_close):
                break
        taken, self.buffer = self.buffer[:count], self.buffer[count:]
        return taken

    def _fill(self, deadline: float, eof_ok: bool = False) -> bool:
        """Read what the peer sent next, within the attempt's deadline; False at a tolerated end."""
        self.sock.settimeout(_remaining(deadline))
        data = self.sock.recv(65536)
        if not data:
            if eof_ok:
                return False
            raise ProtocolError("the connection closed before the response was complete")
        self.buffer += data
        return True

    def idle_and_open(self) -> bool:
        """Kept, not too old, and the peer has neither closed it nor sent anything unasked."""
        if time.monotonic() - self.used > IDLE_SECONDS:
            return False
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def _head_end(buffer: bytes) -> tuple[int, int] | None:
    """Where the head ends in `buffer` and where the body starts, or None if it has not ended yet."""
    crlf, lf = buffer.find(b"\r\n\r\n"), buffer.find(b"\n\n")
    if crlf != -1 and (lf == -1 or crlf < lf):
        return crlf, crlf + 4
    if lf != -1:  # bare LFs (RFC 9112, 2.2: a recipient may accept them)
        return lf, lf + 2
    return None


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("timed out")
    return left


def _connection(key: tuple, deadline: float) -> Connection:
    """This thread's kept connection for `key` if it is still good, else a new one."""
    kept = getattr(_connections, "by_key", None)
    if kept is None:
        kept = _connections.by_key = {}
    for stale in [k for k, c in kept.items() if time.monotonic() - c.used > IDLE_SECONDS]:
        kept.pop(stale).close()
    connection = kept.pop(key, None)
    if connection is not None and connection.idle_and_open():
        kept[key] = connection
        return connection
    if connection is not None:
        connection.close()
    kept[key] = connection = Connection(_connect(key, deadline))
    return connection


def _connect(key: tuple, deadline: float) -> socket.socket:
    """A connection to the vetted address; TLS verified against the host name, never the address."""
    scheme, host, address, port, ca_bundle = key
    sock = socket.create_connection((address, port), timeout=_remaining(deadline))
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if scheme == "https":
            sock.settimeout(_remaining(deadline))
            sock = _tls_context(ca_bundle).wrap_socket(sock, server_hostname=host)
    except BaseException:
        sock.close()
        raise
    return sock


@lru_cache(maxsize=8)
def _tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    """Certificates required and checked against the host name, from the configured CA file."""
    context = ssl.create_default_context(cafile=ca_bundle or certifi.where())
    context.check_hostname, context.verify_mode = True, ssl.CERT_REQUIRED
    return context


def _drop(connection: Connection | None) -> None:
    """Forget a connection after a failure, so the next attempt starts from a new one."""
    if connection is None:
        return
    kept = getattr(_connections, "by_key", {})
    for key in [k for k, c in kept.items() if c is connection]:
        kept.pop(key)
    connection.close()


def _describe(error: Exception) -> str:
    """A short reason without the URL or the address (kept out of error strings on purpose)."""
    text = str(error)
    if "timed out" in text.lower():
        return "timeout"
    return f"{type(error).__name__}: {text}"[:300]

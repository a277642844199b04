"""The webhook transport's HTTP/1.1 exchange against a raw loopback server that answers scripted bytes."""

import ipaddress
import socket
import threading
import time

import pytest

from shop.domain.webhooks import transport
from shop.domain.webhooks.transport import NetworkError, post

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))


class RawServer:
    """Answers each request with the next scripted bytes (a tuple: pieces sent 20 ms apart);
    counts connections and requests and keeps each request's head."""

    def __init__(self, answers: list, close_after: bool = False, host: str = "127.0.0.1"):
        self.answers, self.close_after = list(answers), close_after
        self.connections = self.requests = 0
        self.heads: list[bytes] = []
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.listener = socket.create_server((host, 0), family=family)
        self.host, self.port = host, self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        data = b""
        with conn:
            if not self.answers:  # silent: read the request, never answer, hold the connection
                conn.settimeout(3)
                try:
                    while conn.recv(65536):
                        pass
                except OSError:
                    return
            while self.answers:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, data = data.split(b"\r\n\r\n", 1)
                length = int(
                    next(
                        line.split(b":")[1]
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    )
                )
                while len(data) < length:
                    data += conn.recv(65536)
                data = data[length:]
                self.requests += 1
                self.heads.append(head)
                answer = self.answers.pop(0)
                for piece in answer if isinstance(answer, tuple) else (answer,):
                    conn.sendall(piece)
                    if isinstance(answer, tuple):
                        time.sleep(0.02)
                if self.close_after:
                    return

    def url(self, path: str = "/hook") -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{path}"

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def raw_server():
    servers = []

    def start(answers, **kwargs):
        servers.append(RawServer(answers, **kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
    transport._connections.by_key = {}


def send(server, timeout=5, path="/hook", headers=None):
    return post(
        server.url(path),
        b'{"id":"evt_1"}',
        headers or {"Content-Type": "application/json"},
        timeout,
        trusted_networks=LOOPBACK,
    )


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


def test_a_kept_connection_carries_the_next_attempts(raw_server):
    server = raw_server([OK, OK, OK])
    replies = [send(server) for _ in range(3)]
    assert [(r.status, r.body) for r in replies] == [(200, "ok")] * 3
    assert server.connections == 1 and server.requests == 3


@pytest.mark.parametrize(
    ("answer", "body"),
    [
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"3\r\nabc\r\n2;x=1\r\nde\r\n0\r\nT: 1\r\n\r\n",
            "abcde",
        ),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nhi", "hi"),
        (b"HTTP/1.1 204 No Content\r\n\r\n", ""),
        (b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", "ok"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n", "0123456789"),
        ((b"HTTP/1.1 200 OK\r\nContent-", b"Length: 5\r", b"\n\r\nhel", b"lo"), "hello"),
        ((b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r", b"\nabc\r\n0\r\n", b"\r\n"), "abc"),
    ],
    ids=[
        "a chunked body",
        "an interim 100 before the answer",
        "a 204 without a body",
        "bare LF line ends",
        "an upper-case hex chunk size",
        "a head and body in pieces",
        "a chunked body in pieces",
    ],
)
def test_complete_answers_leave_the_connection_reusable(raw_server, answer, body):
    server = raw_server([answer, OK])
    assert send(server).body == body
    assert send(server).status == 200
    assert server.connections == 1


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
        b"HTTP/1.1 500 Oops\r\nContent-Length: 5000\r\n\r\n" + b"x" * 5000,
        b"HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n1388\r\n" + b"y" * 5000 + b"\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    ],
    ids=[
        "connection close",
        "HTTP/1.0",
        "a body beyond 2 KB",
        "a chunked body beyond 2 KB",
        "chunked and a Content-Length both",
        "bytes the request did not ask for",
    ],
)
def test_answers_that_end_the_connection_are_not_reused(raw_server, answer):
    server = raw_server([answer, OK])
    first = send(server)
    assert len(first.body) <= 2048 and first.status in (200, 500)
    assert send(server).status == 200
    assert server.connections == 2


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 502 Bad Gateway\r\n\r\nupstream down",
        b"HTTP/1.1 502 Bad Gateway\r\nTransfer-Encoding: gzip\r\n\r\nupstream down",
    ],
    ids=["no length", "a transfer coding that is not chunked"],
)
def test_a_body_without_length_runs_until_close(raw_server, answer):
    reply = send(raw_server([answer], close_after=True))
    assert (reply.status, reply.body) == (502, "upstream down")


def test_only_safe_response_headers_are_kept(raw_server):
    answer = (
        b"HTTP/1.1 429 Too Many\r\nRetry-After: 30\r\nSet-Cookie: s=1\r\nAuthorization: x\r\n"
        b"X-Request-Id: r1\r\nContent-Length: 0\r\n\r\n"
    )
    reply = send(raw_server([answer]))
    assert reply.headers == {"Retry-After": "30", "X-Request-Id": "r1", "Content-Length": "0"}


@pytest.mark.parametrize(
    "answer",
    [
        b"SMTP ready\r\n\r\n",
        b"HTTP/1.1 2x0 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nok\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x2\r\nok\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nok\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n",
    ],
    ids=[
        "not HTTP",
        "a bad status code",
        "a bad length",
        "a body cut short",
        "two different lengths",
        "a negative chunk size",
        "a chunk size with 0x",
        "a chunk longer than its size",
        "a chunked body cut short",
    ],
)
def test_answers_that_are_not_http_are_network_errors(raw_server, answer):
    server = raw_server([answer], close_after=True)
    with pytest.raises(NetworkError) as failed:
        send(server)
    assert str(failed.value).startswith("network error: ProtocolError")
    assert failed.value.address == "127.0.0.1"


def test_a_silent_peer_is_a_timeout_within_the_deadline(raw_server):
    server = raw_server([])  # accepts, reads, never answers
    with pytest.raises(NetworkError) as failed:
        send(server, timeout=0.5)
    assert str(failed.value) == "timeout"


def test_the_request_target_is_ascii_with_the_rest_percent_encoded(raw_server):
    server = raw_server([OK])
    assert send(server, path="/h\u00e9/\u20ac?q=\u00fc&x=%41").status == 200
    assert server.heads[0].split(b"\r\n")[0] == b"POST /h%C3%A9/%E2%82%AC?q=%C3%BC&x=%41 HTTP/1.1"


def test_a_header_with_a_line_break_is_refused_before_anything_is_sent(raw_server):
    server = raw_server([OK])
    with pytest.raises(NetworkError) as failed:
        send(server, headers={"Content-Type": "application/json\r\nX-Injected: 1"})
    assert "line break" in str(failed.value)
    assert server.connections == 0


def test_an_ipv6_literal_is_bracketed_in_the_host_header(raw_server):
    try:
        server = raw_server([OK], host="::1")
    except OSError:
        pytest.skip("no IPv6 loopback here")
    assert send(server).status == 200
    assert f"Host: [::1]:{server.port}".encode() in server.heads[0].split(b"\r\n")

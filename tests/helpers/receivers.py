"""Loopback peers for end-to-end tests: an SMTP sink (aiosmtpd) and a scriptable HTTP receiver."""

import asyncio
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.controller import Controller


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SmtpSink:
    """A real SMTP server on 127.0.0.1 that keeps every message it accepts."""

    def __init__(self, port: int | None = None, delay: float = 0, smtputf8: bool = False):
        self.messages = []
        self.sessions = 0
        self.delay = delay  # seconds before each message is accepted, as a slow server takes
        self.port = port or free_port()
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port, enable_SMTPUTF8=smtputf8)

    async def handle_EHLO(self, server, session, envelope, hostname, responses):
        self.sessions += 1
        session.host_name = hostname
        return responses

    async def handle_DATA(self, server, session, envelope):
        await asyncio.sleep(self.delay)
        self.messages.append(envelope)
        return "250 Message accepted for delivery"

    def __enter__(self):
        self.controller.start()
        return self

    def __exit__(self, *exc):
        self.controller.stop()

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"


class HttpReceiver:
    """A JSON HTTP server on 127.0.0.1 answering from a script of (status, body[, headers]) and
    recording requests; `keep_alive` speaks HTTP/1.1 and `connections` counts the connections."""

    def __init__(
        self, script=None, default=(200, {"id": "gw-1"}), ssl_context=None, delay=0.0, keep_alive=False
    ):
        self.script = list(script or [])
        self.default = default
        self.delay = delay
        self.scheme = "https" if ssl_context else "http"
        self.requests = []
        self.connections = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def setup(self):
                super().setup()
                with receiver.lock:
                    receiver.connections += 1

            def do_POST(self):
                expected = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(expected)
                if len(body) < expected:  # the sender died mid-request (the SIGKILL test): never received
                    self.close_connection = True
                    return
                time.sleep(receiver.delay)
                with receiver.lock:
                    receiver.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    status, answer, *extra = receiver.script.pop(0) if receiver.script else receiver.default
                payload = json.dumps(answer).encode()
                self.send_response(status)
                for name, value in (extra[0] if extra else {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if ssl_context is not None:
            self.server.socket = ssl_context.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/sms"

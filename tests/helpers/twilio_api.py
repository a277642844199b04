"""A fake of Twilio's REST API on 127.0.0.1 over HTTPS (a trustme CA): the Messages resource only,
written from Twilio's documented formats. It checks basic auth and the form encoding, records each
form, and answers from a script."""

import base64
import json
import secrets
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import trustme

ACCOUNT_SID = "AC" + "0123456789abcdef" * 2
AUTH_TOKEN = "twilio-auth-token-for-tests"
ERRORS = "https://www.twilio.com/docs/errors/"


def twilio_error(status: int, code: int, message: str) -> tuple[int, dict]:
    """An answer as Twilio sends its errors: JSON `{code, message, more_info, status}`."""
    return status, {"code": code, "message": message, "more_info": ERRORS + str(code), "status": status}


def created(sid: str | None = None, status: str = "queued") -> tuple[int, dict]:
    """Twilio's 201 for a created message (the fields the service reads, and some it does not)."""
    sid = sid or "SM" + secrets.token_hex(16)
    return 201, {"sid": sid, "status": status, "account_sid": ACCOUNT_SID, "error_code": None}


class FakeTwilio:
    """`script` is a list of (status, json) answers, then `created()` for each further message.
    `forms` holds each accepted-for-processing form (dict of name → value); `requests` counts every
    request, refused credentials included."""

    def __init__(self, tmp_path, script=None, sid: str = ACCOUNT_SID, token: str = AUTH_TOKEN):
        self.script = list(script or [])
        self.sid, self.token = sid, token
        self.forms, self.requests, self.answered = [], 0, []
        self.lock = threading.Lock()
        self.ca = trustme.CA()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
        self.ca_path = str(tmp_path / "twilio-ca.pem")
        self.ca.cert_pem.write_to_path(self.ca_path)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, answer = fake.answer(self.path, self.headers, body)
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        return Handler

    def answer(self, path: str, headers, body: bytes) -> tuple[int, dict]:
        """Twilio's checks in its order: the resource, the credentials, the form; then the script."""
        with self.lock:
            self.requests += 1
            if path != f"/2010-04-01/Accounts/{self.sid}/Messages.json":
                return twilio_error(404, 20404, "The requested resource was not found")
            expected = "Basic " + base64.b64encode(f"{self.sid}:{self.token}".encode()).decode()
            if headers.get("Authorization") != expected:
                return twilio_error(401, 20003, "Authenticate")
            if headers.get("Content-Type", "").split(";")[0] != "application/x-www-form-urlencoded":
                return twilio_error(400, 21604, "A 'To' phone number is required.")
            form = {name: values[-1] for name, values in parse_qs(body.decode("utf-8")).items()}
            self.forms.append(form)
            status, answer = self.script.pop(0) if self.script else created()
            self.answered.append((status, answer))
            return status, answer

    def sids(self) -> list[str]:
        """The sids of the messages this fake accepted."""
        return [answer["sid"] for status, answer in self.answered if status == 201]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.server.server_address[1]}"

    def settings(self, **extra) -> dict:
        """The service's settings (SHOP_ names) that point it at this fake."""
        return {
            "SMS_PROVIDER": "twilio",
            "TWILIO_ACCOUNT_SID": self.sid,
            "TWILIO_AUTH_TOKEN": self.token,
            "TWILIO_API_URL": self.url,
            **extra,
        }

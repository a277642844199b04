"""The shipped gunicorn settings pass the longest request the OpenAPI document allows to the app."""

import os
import subprocess
import sys
from urllib.parse import urlencode

import requests

from shop import gunicorn_conf
from tests.helpers.processes import ROOT, http_ok, stop, wait_until
from tests.helpers.receivers import free_port

GUNICORN_DEFAULT_LIMIT = 4094


def longest_appointment_listing() -> str:
    """GET /api/v1/appointments with every filter at its documented longest, in 4-byte characters."""
    return "/api/v1/appointments?" + urlencode(
        {
            "date_from": "2026-01-01",
            "date_to": "2026-12-31",
            "status": "checked_in",
            "location_id": "2147483647",
            "customer_email": "\U0001f600" * 320,
            "ticket_id": "\U0001f600" * 255,
            "tech_id": "\U0001f600" * 40,
            "limit": "100",
            "cursor": "A" * 128 + "." + "B" * 127,
        }
    )


def test_the_longest_documented_listing_reaches_the_app_under_gunicorn(acme, tmp_path):
    target = longest_appointment_listing()
    assert GUNICORN_DEFAULT_LIMIT < len(f"GET {target} HTTP/1.1") <= gunicorn_conf.limit_request_line
    port = free_port()
    log = open(tmp_path / "gunicorn.log", "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "python:shop.gunicorn_conf",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "app:app",
        ],
        cwd=ROOT,
        env=dict(os.environ),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: http_ok(f"{base}/api/v1/health"))
        response = requests.get(base + target, headers=acme, timeout=10)
    finally:
        stop(proc)
        log.close()
    # the app answered (the made-up cursor is refused), not gunicorn's HTML 414
    assert response.status_code == 400, response.text[:200]
    assert response.json()["error"]["code"] == "invalid_cursor"

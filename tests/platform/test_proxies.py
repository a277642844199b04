"""SHOP_TRUSTED_PROXIES: behind a proxy the failure limit sees each client; with none, no header fools it."""

import logging

import pytest

from shop import clock
from shop.config import ConfigError
from shop.platform import auth
from shop.platform.auth_failures import BlockedAddresses
from tests.helpers import assert_error, auth_headers

BAD_KEY = auth_headers("sk_test_wrong")
LIMIT = 3


@pytest.fixture
def proxied(app_with, acme, monkeypatch):
    """A test client of the app as configured behind one trusted proxy (on the same database)."""
    behind = app_with(TRUSTED_PROXIES=1)
    behind.config["AUTH_FAILURES_PER_MINUTE"] = LIMIT
    _fresh_view(monkeypatch)
    return behind.test_client()


@pytest.fixture
def direct(app, acme, monkeypatch):
    """The suite's app (no trusted proxy) with the failure limit lowered."""
    monkeypatch.setitem(app.config, "AUTH_FAILURES_PER_MINUTE", LIMIT)
    _fresh_view(monkeypatch)
    return app.test_client()


def _fresh_view(monkeypatch) -> None:
    """A new view of blocked addresses (a process keeps its view up to a second), in one minute."""
    monkeypatch.setattr(auth, "blocked_addresses", BlockedAddresses())
    if 60 - clock.timestamp() % 60 < 5:  # the failure count is per clock minute: stay inside one
        clock.advance(6)


def _from(forwarded_for: str) -> dict:
    return {"X-Forwarded-For": forwarded_for}


def test_behind_one_proxy_a_client_with_bad_keys_does_not_lock_out_another(proxied, acme):
    for _ in range(LIMIT):
        assert proxied.get("/api/v1/me", headers={**BAD_KEY, **_from("203.0.113.7")}).status_code == 401
    locked = proxied.get("/api/v1/me", headers={**acme, **_from("203.0.113.7")})
    assert_error(locked, 429, "rate_limited")
    # another client through the same proxy (the same peer address) is served
    assert proxied.get("/api/v1/me", headers={**acme, **_from("198.51.100.9")}).status_code == 200


def test_behind_one_proxy_a_client_cannot_escape_by_forging_its_own_header(proxied, acme):
    # nginx appends the real peer to what the client sent: only the last hop is believed
    for forged in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
        headers = {**BAD_KEY, **_from(f"{forged}, 203.0.113.7")}
        assert proxied.get("/api/v1/me", headers=headers).status_code == 401
    locked = proxied.get("/api/v1/me", headers={**acme, **_from("10.9.9.9, 203.0.113.7")})
    assert_error(locked, 429, "rate_limited")
    assert proxied.get("/api/v1/me", headers={**acme, **_from("10.0.0.1, 198.51.100.9")}).status_code == 200


def test_with_no_trusted_proxy_a_forged_forwarded_for_changes_nothing(direct, acme):
    for i in range(LIMIT):
        assert direct.get("/api/v1/me", headers={**BAD_KEY, **_from(f"198.51.100.{i}")}).status_code == 401
    # the peer is locked out whatever address it claims, a valid key included
    for claimed in ("198.51.100.200", "203.0.113.7", "127.0.0.2"):
        assert_error(direct.get("/api/v1/me", headers={**acme, **_from(claimed)}), 429, "rate_limited")
    assert direct.get("/api/v1/me", headers=acme).status_code == 429


def test_behind_one_proxy_the_forwarded_scheme_is_believed(proxied, acme):
    from flask import request

    behind, seen = proxied.application, {}

    @behind.after_request
    def _note(response):
        seen["scheme"], seen["addr"] = request.scheme, request.remote_addr
        return response

    proxied.get("/api/v1/me", headers={**acme, "X-Forwarded-Proto": "https", **_from("203.0.113.7")})
    assert seen == {"scheme": "https", "addr": "203.0.113.7"}


@pytest.mark.parametrize(
    "value",
    [-1, "-1", "abc", 1.5, "1.5", True, 11, 10**30, "", [1], None],
    ids=lambda v: f"SHOP_TRUSTED_PROXIES={v!r:.20}",
)
def test_a_bad_trusted_proxies_setting_refuses_to_start(app_with, value):
    with pytest.raises(ConfigError, match="SHOP_TRUSTED_PROXIES must be a whole number from 0 to 10"):
        app_with(TRUSTED_PROXIES=value)


@pytest.mark.parametrize("value", ["-1", "two", "1.0", "[]"], ids=lambda v: f"env {v!r}")
def test_a_bad_trusted_proxies_variable_refuses_to_start(app_with, monkeypatch, value):
    monkeypatch.setenv("SHOP_TRUSTED_PROXIES", value)
    with pytest.raises(ConfigError, match=r"SHOP_TRUSTED_PROXIES .* not "):
        app_with()


def test_the_trusted_proxies_variable_is_read_as_a_number(app_with, monkeypatch):
    monkeypatch.setenv("SHOP_TRUSTED_PROXIES", "2")
    behind = app_with()
    assert behind.wsgi_app.x_for == 2 and behind.wsgi_app.x_proto == 2 and behind.wsgi_app.x_host == 0


def test_the_request_log_names_the_forwarded_client(proxied, acme, caplog):
    with caplog.at_level(logging.INFO, logger="shop.request"):
        response = proxied.get("/api/v1/me", headers={**acme, **_from("10.0.0.1, 203.0.113.7")})
    (line,) = [r.fields for r in caplog.records if r.name == "shop.request"]
    assert line["client"] == "203.0.113.7" and line["request_id"] == response.headers["X-Request-Id"]

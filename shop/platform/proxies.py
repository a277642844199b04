"""Reverse proxies in front: werkzeug's ProxyFix believes as many X-Forwarded-* hops as there are."""

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from shop.config import trusted_proxies


def install(app: Flask) -> None:
    """Wrap the WSGI app in ProxyFix when SHOP_TRUSTED_PROXIES > 0 (0: the peer is the client).

    X-Forwarded-For gives request.remote_addr (the failure limit, the request log) and
    X-Forwarded-Proto the scheme. X-Forwarded-Host is not believed: nginx passes on a client's own
    header unless told to set it, and `proxy_set_header Host $host` already carries the host.
    """
    count = trusted_proxies(app.config)
    if count:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=count, x_proto=count, x_host=0, x_port=0, x_prefix=0)

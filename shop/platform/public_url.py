"""The service's public base address: SHOP_PUBLIC_URL, else the request's own root."""

from flask import current_app, request


def public_root() -> str:
    """Where links in emails and feeds point: SHOP_PUBLIC_URL (no trailing slash), else this request's
    root as the proxies in front report it (shop.platform.proxies)."""
    configured = current_app.config.get("PUBLIC_URL")
    if configured:
        return str(configured).rstrip("/")
    return request.url_root.rstrip("/")

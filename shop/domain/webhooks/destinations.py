"""Destination protection: which webhook URLs and addresses the service may send to.

`screen_url` runs at create and update (literal hosts only: no DNS lookups there);
`screen_address` is what the delivery engine calls on every address a hostname resolves to,
immediately before connecting.
"""

import ipaddress
import re
from functools import lru_cache
from urllib.parse import urlsplit

from shop.models.webhooks import MAX_URL_LENGTH

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# the last_error text of a delivery whose destination resolved to a blocked address (spec wording)
BLOCKED_TARGET = "blocked target: hostname resolves to a private or reserved IP address"
# what a refused private or loopback URL tells its user: the one setting that allows it on purpose
TRUSTED_NETWORKS_HINT = (
    "an operator can allow a network they trust by listing its CIDR in "
    "SHOP_WEBHOOK_TRUSTED_NETWORKS (for example 127.0.0.0/8 for local tests)"
)

# cloud metadata services named explicitly: most already fall in a blocked range, but a reason
# that says "cloud metadata" is clearer, and 100.100.100.200 (Alibaba) is in shared space
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",
        "169.254.170.2",
        "169.254.169.123",
        "100.100.100.200",
        "fd00:ec2::254",
        "fd00:ec2::23",
    )
)
METADATA_REASON = "a cloud metadata address"
NAT64_PREFIX = ipaddress.ip_network("64:ff9b::/96")
LABEL = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$")
NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")
FORBIDDEN_CHARACTERS = re.compile(r"[\x00-\x20\x7f\\]")


class UrlRejected(ValueError):
    """A webhook URL that may not be used; the message says why."""


def parse_networks(text) -> tuple:
    """SHOP_WEBHOOK_TRUSTED_NETWORKS (comma-separated CIDRs, or a list) as network objects."""
    if not text:
        return ()
    items = text.split(",") if isinstance(text, str) else list(text)
    return _parse_networks(tuple(str(item).strip() for item in items if str(item).strip()))


@lru_cache(maxsize=32)
def _parse_networks(items: tuple) -> tuple:
    try:
        return tuple(ipaddress.ip_network(item, strict=False) for item in items)
    except ValueError as error:
        raise ValueError(f"SHOP_WEBHOOK_TRUSTED_NETWORKS: {error}") from None


def is_flag_on(value) -> bool:
    """A config flag given as a bool, a number or text (SHOP_WEBHOOK_ALLOW_HTTP=1)."""
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address reaches: mapped, NAT64, 6to4 or IPv4-compatible forms."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in NAT64_PREFIX or (int(address) >> 32 == 0 and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def _category(address: IPAddress) -> str | None:
    """Why an address is not a public destination, or None when it is."""
    if address in METADATA_ADDRESSES:
        return METADATA_REASON
    checks = (
        ("is_unspecified", "an unspecified address"),
        ("is_loopback", "a loopback address"),
        ("is_link_local", "a link-local address"),
        ("is_multicast", "a multicast address"),
        ("is_private", "a private address"),
        ("is_reserved", "a reserved address"),
    )
    for attribute, reason in checks:
        if getattr(address, attribute):
            return reason
    if getattr(address, "is_site_local", False):
        return "a site-local address"
    if not address.is_global:
        return "a non-public address"
    return None


def screen_address(address, trusted_networks=()) -> str | None:
    """Why the service must not connect to this IP address, or None when it may.

    Networks the operator trusts are exempt. An IPv6 address that carries an IPv4 address
    (mapped, NAT64, 6to4) is screened as that IPv4 address too.
    """
    if not isinstance(address, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        address = ipaddress.ip_address(str(address))
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id:
        address = ipaddress.IPv6Address(str(address).split("%", 1)[0])
    embedded = _embedded_ipv4(address) if address.version == 6 else None
    candidates = [address] + ([embedded] if embedded is not None else [])
    if any(
        candidate in network
        for candidate in candidates
        for network in trusted_networks
        if candidate.version == network.version
    ):
        return None
    if embedded is not None and address.ipv4_mapped is not None:
        return _category(embedded)  # ::ffff:a.b.c.d is a.b.c.d on the wire
    for candidate in candidates:
        reason = _category(candidate)
        if reason:
            return reason
    return None


def parse_ipv4_like_inet_aton(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a resolver reads in `host` (inet_aton: 1 to 4 parts, decimal, 0octal, 0xhex)."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(NUMERIC_LABEL.match(part) for part in parts):
        return None
    values = []
    for part in parts:
        if part.startswith("0x"):
            values.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part.startswith("0"):
            if not set(part) <= set("01234567"):
                return None
            values.append(int(part, 8))
        else:
            values.append(int(part))
    # the last part fills every byte the earlier parts left (127.1 is 127.0.0.1)
    *head, last = values
    if any(value > 255 for value in head) or last >= 256 ** (4 - len(head)):
        return None
    number = last
    for index, value in enumerate(head):
        number += value << (8 * (3 - index))
    return ipaddress.IPv4Address(number)


def literal_address(host: str) -> IPAddress | None:
    """The IP address a URL host spells literally (any inet_aton form, IPv6), or None for a name."""
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host)
        except ValueError:  # an IPvFuture literal ([v1.fe80::1]) that urlsplit lets through
            raise UrlRejected("url: the host is not a valid IP address.") from None
    return parse_ipv4_like_inet_aton(host)


def _check_name(host: str) -> str:
    """A DNS name in its ASCII form; raises UrlRejected for anything a resolver would not take."""
    try:
        ascii_host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        raise UrlRejected("url: the host is not a valid hostname.") from None
    labels = ascii_host.split(".")
    if len(ascii_host) > 253 or not all(LABEL.match(label) for label in labels):
        raise UrlRejected("url: the host is not a valid hostname.")
    if NUMERIC_LABEL.match(labels[-1]):
        # a name ending in a number is an address to a browser and to a resolver: no such host
        raise UrlRejected("url: the host is not a valid IP address or hostname.")
    return ascii_host


def _split(url) -> tuple:
    if not isinstance(url, str) or not url:
        raise UrlRejected("url: must be an absolute https URL.")
    if len(url) > MAX_URL_LENGTH:
        raise UrlRejected(f"url: must be at most {MAX_URL_LENGTH} characters.")
    if FORBIDDEN_CHARACTERS.search(url) or not url.isprintable():
        raise UrlRejected("url: must not contain spaces, control characters or backslashes.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UrlRejected("url: is not a valid URL.") from None
    return parts, port


def screen_url(url, allow_http: bool = False, trusted_networks=()) -> str:
    """The URL if the service may send to it, else UrlRejected saying why.

    Absolute https (http only when allowed), no credentials, a valid host that is not a blocked
    literal address or a localhost name. Names are not resolved here; the delivery engine
    screens what they resolve to before each attempt.
    """
    parts, port = _split(url)
    schemes = ("https", "http") if allow_http else ("https",)
    if parts.scheme.lower() not in schemes:
        allowed = "https or http" if allow_http else "https"
        # a local demo's plain-http receiver is allowed by its operator: say which setting does it
        hint = (
            " (plain http only where the operator sets SHOP_WEBHOOK_ALLOW_HTTP=1, for local demos)"
            if parts.scheme.lower() == "http"
            else ""
        )
        raise UrlRejected(f"url: must be an absolute URL with the {allowed} scheme{hint}.")
    if "@" in parts.netloc:
        raise UrlRejected("url: must not contain credentials (user:password@).")
    host = (parts.hostname or "").rstrip(".")
    if not host or port == 0:
        raise UrlRejected("url: must name a host (and a port from 1 to 65535, if any).")
    bracketed = "[" in parts.netloc
    if bracketed and ":" not in host:  # [v1.x] (IPvFuture) would otherwise pass as a name
        raise UrlRejected("url: the host is not a valid IP address.")
    address = literal_address(host)
    if address is None:
        name = _check_name(host)
        if name == "localhost" or name.endswith(".localhost"):
            raise UrlRejected(
                "url: the host is a loopback name (localhost); use the address itself "
                f"(https://127.0.0.1/...): {TRUSTED_NETWORKS_HINT}."
            )
        return url
    reason = screen_address(address, trusted_networks)
    if reason == METADATA_REASON:  # never worth trusting: no hint
        raise UrlRejected(f"url: the host is {reason}; webhooks are sent to public addresses only.")
    if reason:
        raise UrlRejected(
            f"url: the host is {reason}; webhooks are sent to public addresses only, "
            f"but {TRUSTED_NETWORKS_HINT}."
        )
    return url


def screen_url_for_config(url, config) -> str:
    """screen_url with the operator's settings (WEBHOOK_ALLOW_HTTP, WEBHOOK_TRUSTED_NETWORKS)."""
    return screen_url(
        url,
        is_flag_on(config.get("WEBHOOK_ALLOW_HTTP")),
        parse_networks(config.get("WEBHOOK_TRUSTED_NETWORKS")),
    )

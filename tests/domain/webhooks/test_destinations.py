"""The destination screen: which webhook URLs and resolved addresses are refused, and why."""

import ipaddress

import pytest

from shop.domain.webhooks.destinations import (
    UrlRejected,
    parse_ipv4_like_inet_aton,
    parse_networks,
    screen_address,
    screen_url,
)

BLOCKED_URLS = [
    # loopback in every spelling a resolver accepts
    ("https://127.0.0.1/hook", "loopback dotted quad"),
    ("https://127.0.0.1./hook", "loopback with a trailing dot"),
    ("https://127.1/hook", "loopback short form 127.1"),
    ("https://127.0.1/hook", "loopback three-part form"),
    ("https://2130706433/hook", "loopback as one decimal number"),
    ("https://0x7f000001/hook", "loopback as one hex number"),
    ("https://0x7f.1/hook", "loopback hex short form"),
    ("https://0X7F.0.0.1/hook", "loopback upper-case hex part"),
    ("https://017700000001/hook", "loopback as one octal number"),
    ("https://0177.0.0.1/hook", "loopback octal first part"),
    ("https://0177.0000.0000.0001/hook", "loopback octal every part"),
    ("https://127.255.255.254:8443/hook", "loopback with a port"),
    ("https://[::1]/hook", "IPv6 loopback"),
    ("https://[0:0:0:0:0:0:0:1]/hook", "IPv6 loopback written out"),
    ("https://[::ffff:127.0.0.1]/hook", "IPv4-mapped loopback"),
    ("https://[::ffff:7f00:1]/hook", "IPv4-mapped loopback in hex"),
    ("https://[::127.0.0.1]/hook", "IPv4-compatible loopback"),
    ("https://[64:ff9b::127.0.0.1]/hook", "NAT64 loopback"),
    ("https://[2002:7f00:1::1]/hook", "6to4 around loopback"),
    ("https://localhost/hook", "localhost"),
    ("https://LOCALHOST./hook", "localhost upper case with a trailing dot"),
    ("https://api.localhost/hook", "a name under localhost"),
    # unspecified
    ("https://0.0.0.0/hook", "unspecified IPv4"),
    ("https://0/hook", "unspecified IPv4 as a single zero"),
    ("https://[::]/hook", "unspecified IPv6"),
    # private
    ("https://10.0.0.1/hook", "private 10/8"),
    ("https://10.1/hook", "private 10/8 short form"),
    ("https://172.16.5.4/hook", "private 172.16/12"),
    ("https://192.168.1.1/hook", "private 192.168/16"),
    ("https://3232235777/hook", "private 192.168.1.1 as a decimal number"),
    ("https://0xc0.0xa8.0x01.0x01/hook", "private 192.168.1.1 in hex parts"),
    ("https://100.64.0.1/hook", "carrier-grade shared address space"),
    ("https://[::ffff:10.0.0.1]/hook", "IPv4-mapped private"),
    ("https://[fd00::1]/hook", "IPv6 unique local"),
    ("https://[fc00::1]/hook", "IPv6 unique local fc00"),
    # link-local and cloud metadata
    ("https://169.254.169.254/latest/meta-data", "cloud metadata IPv4"),
    ("https://169.254.169.254./latest/meta-data", "cloud metadata with a trailing dot"),
    ("https://2852039166/latest", "cloud metadata as a decimal number"),
    ("https://0xa9.0xfe.0xa9.0xfe/latest", "cloud metadata in hex parts"),
    ("https://[::ffff:169.254.169.254]/latest", "IPv4-mapped cloud metadata"),
    ("https://[fd00:ec2::254]/latest", "AWS IPv6 metadata"),
    ("https://100.100.100.200/latest", "Alibaba metadata"),
    ("https://169.254.1.1/hook", "link-local IPv4"),
    ("https://[fe80::1]/hook", "link-local IPv6"),
    ("https://[fe80::1%25eth0]/hook", "link-local IPv6 with a zone"),
    # multicast, broadcast, reserved, documentation
    ("https://224.0.0.1/hook", "IPv4 multicast"),
    ("https://239.255.255.250/hook", "IPv4 multicast SSDP"),
    ("https://[ff02::1]/hook", "IPv6 multicast"),
    ("https://255.255.255.255/hook", "broadcast"),
    ("https://240.0.0.1/hook", "reserved 240/4"),
    ("https://192.0.2.10/hook", "documentation range"),
    ("https://198.18.0.1/hook", "benchmarking range"),
    ("https://[2001:db8::1]/hook", "IPv6 documentation range"),
    ("https://[5f00::1]/hook", "IPv6 reserved range"),
]

MALFORMED_URLS = [
    ("http://hooks.example.com/x", "plain http without SHOP_WEBHOOK_ALLOW_HTTP"),
    ("ftp://hooks.example.com/x", "ftp scheme"),
    ("javascript:alert(1)", "javascript scheme"),
    ("file:///etc/passwd", "file scheme"),
    ("hooks.example.com/x", "no scheme"),
    ("//hooks.example.com/x", "scheme-relative"),
    ("https:///x", "no host"),
    ("https://", "scheme only"),
    ("https://user:pass@hooks.example.com/x", "credentials"),
    ("https://user@hooks.example.com/x", "user name only"),
    ("https://hooks.example.com@127.0.0.1/x", "credentials hiding a loopback host"),
    ("https://hooks.example.com\\@127.0.0.1/x", "backslash confusion"),
    ("https://hooks.example.com:0/x", "port zero"),
    ("https://hooks.example.com:99999/x", "port out of range"),
    ("https://hooks.example.com:abc/x", "port not a number"),
    ("https://hooks example.com/x", "space in the host"),
    ("https://hooks.example.com/x\ny", "newline"),
    ("https://[::1/x", "unclosed IPv6 bracket"),
    ("https://[v1.fe80::a]/x", "IPvFuture literal"),
    ("https://[v1.x]/x", "IPvFuture literal without a colon"),
    ("https://256.1.1.1/x", "IPv4 part above 255"),
    ("https://1.2.3.4.5/x", "five numeric parts"),
    ("https://08.1.1.1/x", "bad octal part"),
    ("https://example.123/x", "name ending in a number"),
    ("https://exa_mple..com/x", "empty label"),
    ("https://-bad.example.com/x", "label starting with a hyphen"),
    ("https://" + "a" * 64 + ".com/x", "label longer than 63"),
    ("https://hooks.example.com/" + "x" * 2100, "longer than 2048 characters"),
]

ALLOWED_URLS = [
    ("https://hooks.example.com/repair-shop", "a public name"),
    ("https://hooks.example.com./x", "a public name with a trailing dot"),
    ("HTTPS://Hooks.Example.COM/x", "upper-case scheme and host"),
    ("https://hooks.example.com:8443/x?y=1", "a port and a query"),
    ("https://8.8.8.8/hook", "a public IPv4 literal"),
    ("https://134744072/hook", "a public IPv4 as a decimal number"),
    ("https://[2606:4700:4700::1111]/hook", "a public IPv6 literal"),
    ("https://[::ffff:8.8.8.8]/hook", "IPv4-mapped public address"),
    ("https://bücher.example/x", "an internationalised name"),
    ("https://localhost.example.com/x", "a public name that merely starts with localhost"),
    ("https://my_host.example.com/x", "an underscore in a label"),
    ("https://1.example.com/x", "a numeric first label"),
]


@pytest.mark.parametrize("url", [u for u, _ in BLOCKED_URLS], ids=[f"blocks {d}" for _, d in BLOCKED_URLS])
def test_blocked_addresses_are_refused(url):
    with pytest.raises(UrlRejected) as error:
        screen_url(url)
    assert str(error.value).startswith("url: ")


@pytest.mark.parametrize(
    "url", [u for u, _ in MALFORMED_URLS], ids=[f"refuses {d}" for _, d in MALFORMED_URLS]
)
def test_malformed_or_unsafe_urls_are_refused(url):
    with pytest.raises(UrlRejected):
        screen_url(url)


@pytest.mark.parametrize("url", [u for u, _ in ALLOWED_URLS], ids=[f"allows {d}" for _, d in ALLOWED_URLS])
def test_public_destinations_are_allowed(url):
    assert screen_url(url) == url


def test_the_table_covers_at_least_forty_blocked_and_allowed_forms():
    assert len(BLOCKED_URLS) + len(ALLOWED_URLS) >= 40


def test_http_is_allowed_only_when_the_operator_says_so():
    assert screen_url("http://hooks.example.com/x", allow_http=True) == "http://hooks.example.com/x"
    with pytest.raises(UrlRejected):
        screen_url("http://127.0.0.1/x", allow_http=True)  # the address screen still applies


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1:9000/x",
        "https://2130706433/x",
        "https://[::ffff:127.0.0.1]/x",
        "https://[::1]/x",
    ],
    ids=["dotted", "decimal", "mapped", "ipv6 loopback"],
)
def test_trusted_networks_are_exempt(url):
    trusted = parse_networks("127.0.0.0/8, ::1/128")
    assert screen_url(url, trusted_networks=trusted) == url


def test_a_trusted_network_exempts_only_itself():
    trusted = parse_networks("127.0.0.0/8")
    with pytest.raises(UrlRejected):
        screen_url("https://10.0.0.1/x", trusted_networks=trusted)
    with pytest.raises(UrlRejected):
        screen_url("https://localhost/x", trusted_networks=trusted)  # names are not addresses


def test_a_bad_trusted_networks_setting_is_a_clear_error():
    with pytest.raises(ValueError, match="SHOP_WEBHOOK_TRUSTED_NETWORKS"):
        parse_networks("10.0.0.0/8, not-a-network")


@pytest.mark.parametrize(
    "address,blocked",
    [
        ("93.184.216.34", False),
        ("2606:2800:220:1:248:1893:25c8:1946", False),
        ("127.0.0.1", True),
        ("10.9.8.7", True),
        ("169.254.169.254", True),
        ("::1", True),
        ("::ffff:192.168.0.1", True),
        ("fd00:ec2::254", True),
        ("fe80::1%eth0", True),
        ("0.0.0.0", True),
        ("2002:c0a8:101::1", True),
        ("64:ff9b::a00:1", True),
        ("::ffff:93.184.216.34", False),
    ],
    ids=lambda v: str(v),
)
def test_screen_address_is_what_the_engine_calls_on_each_resolved_address(address, blocked):
    assert (screen_address(address) is not None) is blocked
    assert (screen_address(ipaddress.ip_address(address.split("%")[0])) is not None) is blocked


@pytest.mark.parametrize(
    "host,expected",
    [
        ("127.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("10.0x10.1", "10.16.0.1"),
        ("1.2.3.4.5", None),
        ("256.0.0.1", None),
        ("1.16777216", None),
        ("09", None),
        ("a.b", None),
        ("4294967295", "255.255.255.255"),
        ("4294967296", None),
        ("1..2", None),
    ],
    ids=lambda v: str(v),
)
def test_ipv4_literals_are_read_the_way_inet_aton_reads_them(host, expected):
    parsed = parse_ipv4_like_inet_aton(host)
    assert (str(parsed) if parsed else None) == expected

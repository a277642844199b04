"""A stand-in DNS for end-to-end tests: names listed in the JSON file $SHOP_TEST_DNS_FILE resolve
to the address written there (read at every lookup, so a test can change the answer while the
consumer runs). Put this folder on a consumer's PYTHONPATH; every other name resolves as usual.
Only the resolver (the operating system's boundary) is replaced, none of the project's code."""

import json
import os
import socket

_real_getaddrinfo = socket.getaddrinfo


def _getaddrinfo(host, port, *args, **kwargs):
    path = os.environ.get("SHOP_TEST_DNS_FILE")
    if path and isinstance(host, str):
        try:
            with open(path) as answers:
                address = json.load(answers).get(host.rstrip("."))
        except (OSError, ValueError):
            address = None
        if address is not None:
            return _real_getaddrinfo(address, port, *args, **kwargs)
    return _real_getaddrinfo(host, port, *args, **kwargs)


socket.getaddrinfo = _getaddrinfo

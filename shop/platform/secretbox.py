"""Secrets at rest: encrypted with a Fernet key derived from the instance secret key."""

import base64
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

PREFIX = "fernet:"


@lru_cache(maxsize=8)
def _fernet(secret_key: str) -> Fernet:
    # a derived key, so the key that signs cursors never doubles as an encryption key
    derived = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=b"repair-shop secrets at rest v1"
    ).derive(secret_key.encode())
    return Fernet(base64.urlsafe_b64encode(derived))


def _instance_key(secret_key: str | None) -> str:
    """The given key, the app's SECRET_KEY, or (in the Huey consumer) the configured one."""
    from flask import current_app, has_app_context

    if secret_key:
        return secret_key
    if has_app_context():
        return current_app.config["SECRET_KEY"]
    return _configured_key()


@lru_cache(maxsize=1)
def _configured_key() -> str:
    from shop.config import load_config

    return load_config()["SECRET_KEY"]


def encrypt(plaintext: str, secret_key: str | None = None) -> str:
    """The stored form of a secret (the app's SECRET_KEY unless one is given)."""
    return PREFIX + _fernet(_instance_key(secret_key)).encrypt(plaintext.encode()).decode()


def decrypt(stored: str, secret_key: str | None = None) -> str:
    """The secret behind a stored form; ValueError if it was encrypted under another key."""
    if not stored.startswith(PREFIX):
        raise ValueError("not an encrypted secret")
    try:
        return _fernet(_instance_key(secret_key)).decrypt(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken:
        raise ValueError("the secret was encrypted with another instance secret key") from None

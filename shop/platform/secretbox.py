"""Secrets at rest: encrypted with a Fernet key derived from the instance secret key.

Encryption uses the current key; decryption accepts every key of the ring (MultiFernet), so a
secret written under the previous key keeps working while rotate-secret-key re-encrypts.
"""

import base64
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from shop.platform import keyring

PREFIX = "fernet:"


@lru_cache(maxsize=8)
def _fernet(secret_key: str) -> Fernet:
    # a derived key, so the key that signs cursors never doubles as an encryption key
    derived = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=b"repair-shop secrets at rest v1"
    ).derive(secret_key.encode())
    return Fernet(base64.urlsafe_b64encode(derived))


@lru_cache(maxsize=8)
def _multi(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([_fernet(key) for key in keys])


def instance_keys() -> tuple[str, ...]:
    """The ring's keys, current first: the app's configuration, or (in the consumer) the queue's."""
    from flask import current_app, has_app_context

    if has_app_context():
        return keyring.ring(current_app.config).keys
    from shop.queue import settings

    return keyring.ring(settings()).keys


def encrypt(plaintext: str, keys: tuple[str, ...] | None = None) -> str:
    """The stored form of a secret, under the current key (the first of `keys`)."""
    keys = keys or instance_keys()
    return PREFIX + _fernet(keys[0]).encrypt(plaintext.encode()).decode()


def decrypt(stored: str, keys: tuple[str, ...] | None = None) -> str:
    """The secret behind a stored form; ValueError if no key of the ring opens it."""
    if not stored.startswith(PREFIX):
        raise ValueError("not an encrypted secret")
    try:
        return _multi(keys or instance_keys()).decrypt(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken:
        raise ValueError("the secret was encrypted with another instance secret key") from None


def under_current_key(stored: str, keys: tuple[str, ...]) -> bool:
    """Whether the current key alone opens this stored form."""
    return is_readable(stored, keys[:1])


def is_readable(stored: str, keys: tuple[str, ...]) -> bool:
    """Whether some key of `keys` opens this stored form."""
    try:
        decrypt(stored, keys)
    except ValueError:
        return False
    return True


def reencrypt(stored: str, keys: tuple[str, ...]) -> str:
    """The same secret under the current key (ValueError if no key of the ring opens it)."""
    try:
        return PREFIX + _multi(keys).rotate(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken:
        raise ValueError("the secret was encrypted with another instance secret key") from None

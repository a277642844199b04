"""The instance secret key and the secrets stored under it: the start-up check and key rotation."""

import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from peewee import Field

from shop.db import write_transaction
from shop.models import IdempotencyRecord, WebhookSubscription
from shop.platform import keyring, secretbox
from shop.platform.keyring import KeyRing

BATCH = 200  # rows re-encrypted per transaction: the write lock is never held for long


@dataclass(frozen=True)
class StoredKind:
    """A column that holds secrets encrypted by shop.platform.secretbox."""

    name: str
    field: Field

    @property
    def model(self):
        return self.field.model

    def encrypted(self):
        """The rows holding an encrypted value in this column (idempotent replies are mostly plain)."""
        return self.model.select(self.model._meta.primary_key, self.field).where(
            self.field.startswith(secretbox.PREFIX)
        )


STORED = (
    StoredKind("webhook_signing_secrets", WebhookSubscription.secret_encrypted),
    StoredKind("previous_webhook_signing_secrets", WebhookSubscription.previous_secret_encrypted),
    StoredKind("idempotent_responses", IdempotencyRecord.body),
)


class SecretKeyMismatch(RuntimeError):
    """Stored secrets that the configured key cannot open: the service must not start."""


def where_the_key_is(ring: KeyRing) -> str:
    """The setting or file an operator must fix, as a message names it."""
    if ring.source == "SHOP_SECRET_KEY":
        return "the key set by SHOP_SECRET_KEY (with SHOP_SECRET_KEY_FALLBACKS)"
    return f"the key file {ring.source} (with {keyring.previous_path(ring.source)})"


def start_up_problem(config) -> str | None:
    """Why the service must not start with this key, or None: the oldest and the newest stored
    secret of each kind must open (a handful of decryptions, however many rows there are)."""
    ring = keyring.ring(config)
    for kind in STORED:
        query = kind.encrypted()
        order = kind.model.created_at
        samples = [query.order_by(order).first(), query.order_by(order.desc()).first()]
        for row in filter(None, samples):
            if not secretbox.is_readable(getattr(row, kind.field.name), ring.keys):
                return unreadable_message(kind.name, ring)
    return None


def unreadable_message(kind: str, ring: KeyRing) -> str:
    """The refusal: what cannot be read, with which key, and what to do."""
    return (
        f"stored secrets ({kind.replace('_', ' ')}) cannot be decrypted with {where_the_key_is(ring)}. "
        "The database was written under another secret key: restore the key file that belongs with "
        "this database (every backup includes it) or set SHOP_SECRET_KEY to that key. During a key "
        "rotation, the previous key must stay in SHOP_SECRET_KEY_FALLBACKS (or secret_key.previous)."
    )


def check_start_up(config) -> None:
    """Raise SecretKeyMismatch when stored secrets do not open with the configured key."""
    problem = start_up_problem(config)
    if problem:
        raise SecretKeyMismatch(problem)


def count_by_key(ring: KeyRing) -> dict:
    """Every stored secret counted: under the current key, under a fallback, or unreadable."""
    counts = {"current": 0, "fallback": 0, "unreadable": 0}
    for kind in STORED:
        for row in kind.encrypted().iterator():
            stored = getattr(row, kind.field.name)
            if secretbox.under_current_key(stored, ring.keys):
                counts["current"] += 1
            elif secretbox.is_readable(stored, ring.keys):
                counts["fallback"] += 1
            else:
                counts["unreadable"] += 1
    return counts


def reencrypt_all(ring: KeyRing) -> dict:
    """Every stored secret not under the current key re-encrypted under it, in short batches; a row
    changed meanwhile (a secret rotated through the API) is left as its writer left it."""
    counts = {}
    for kind in STORED:
        counts[kind.name] = sum(_reencrypt_batch(kind, ring, batch) for batch in _batches(kind))
    return counts


def _batches(kind: StoredKind):
    primary = kind.model._meta.primary_key
    last = None
    while True:
        query = kind.encrypted().order_by(primary).limit(BATCH)
        rows = list(query.where(primary > last) if last is not None else query)
        if not rows:
            return
        yield rows
        last = getattr(rows[-1], primary.name)


def _reencrypt_batch(kind: StoredKind, ring: KeyRing, rows: list) -> int:
    primary, changed = kind.model._meta.primary_key, 0
    with write_transaction():
        for row in rows:
            stored = getattr(row, kind.field.name)
            if secretbox.under_current_key(stored, ring.keys):
                continue
            fresh = secretbox.reencrypt(stored, ring.keys)
            same = (primary == getattr(row, primary.name)) & (kind.field == stored)
            changed += kind.model.update({kind.field: fresh}).where(same).execute()
    return changed


def new_key() -> str:
    """A fresh instance secret key (as the instance folder's first one)."""
    return secrets.token_urlsafe(48)


def write_key_file(path: Path, text: str) -> None:
    """Replace a key file at once (write beside it, then rename), readable by its owner only."""
    temporary = path.with_name(path.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def install_new_key(key_file: Path, ring: KeyRing) -> str:
    """A new current key in the key file, the old one kept in secret_key.previous; every process
    on this machine sees both once it re-reads the files (keyring.REFRESH_SECONDS)."""
    key = new_key()
    # the previous file first: a process that reads between the two writes still opens everything
    write_key_file(keyring.previous_path(key_file), "\n".join(ring.keys) + "\n")
    write_key_file(key_file, key + "\n")
    keyring.forget()
    return key


def wait_for_processes() -> None:
    """Long enough for every running process to have re-read the key files."""
    time.sleep(2 * keyring.REFRESH_SECONDS + 0.5)


class RotationRefused(ValueError):
    """rotate-secret-key cannot run in this state; the message says why and what to do."""


CURSOR_NOTE = (
    "list cursors handed out before the rotation keep working while the previous key is kept; "
    "after it is retired they answer 400 invalid_cursor and the client starts its listing again"
)


def rotate(config) -> dict:
    """The key rotation: a new key in the key file (then everything re-encrypted under it), or,
    with SHOP_SECRET_KEY, re-encryption under the configured key once its predecessor is a fallback."""
    ring = keyring.ring(config)
    _refuse_unreadable(ring)
    if ring.source == "SHOP_SECRET_KEY":
        return _rotate_configured(ring)
    key_file = Path(ring.source)
    if len(ring.keys) > 1:
        raise RotationRefused(
            f"a previous key is still kept in {keyring.previous_path(key_file)}: retire it first "
            "with `rotate-secret-key --retire-previous`"
        )
    install_new_key(key_file, ring)
    wait_for_processes()
    fresh = keyring.ring(config)
    return {
        "key_file": str(key_file),
        "previous_key_file": str(keyring.previous_path(key_file)),
        "re_encrypted": reencrypt_all(fresh),
        "stored_secrets": count_by_key(fresh),
        "cursors": CURSOR_NOTE,
        "next": "keep the previous key until no process or backup you may restore still needs it, then "
        "run `rotate-secret-key --retire-previous`; back up the new key file with the database",
    }


def _rotate_configured(ring: KeyRing) -> dict:
    """SHOP_SECRET_KEY: the service cannot change its own environment, so the operator sets it."""
    if len(ring.keys) == 1:
        return {
            "new_secret_key": new_key(),
            "re_encrypted": {},
            "next": [
                "1. set SHOP_SECRET_KEY to new_secret_key and SHOP_SECRET_KEY_FALLBACKS to the current "
                "key, on every API process and consumer, and restart them",
                "2. run `rotate-secret-key` again (it re-encrypts every stored secret under the new key)",
                "3. later, `rotate-secret-key --retire-previous`, then unset SHOP_SECRET_KEY_FALLBACKS "
                "and restart",
            ],
            "cursors": CURSOR_NOTE,
        }
    return {
        "re_encrypted": reencrypt_all(ring),
        "stored_secrets": count_by_key(ring),
        "cursors": CURSOR_NOTE,
        "next": "run `rotate-secret-key --retire-previous`, then unset SHOP_SECRET_KEY_FALLBACKS and restart",
    }


def retire_previous(config) -> dict:
    """Re-encrypt any straggler, check that the current key alone opens everything, then drop the
    previous key (the file; with SHOP_SECRET_KEY the operator unsets the fallbacks)."""
    ring = keyring.ring(config)
    if len(ring.keys) == 1:
        raise RotationRefused("there is no previous secret key to retire")
    _refuse_unreadable(ring)
    re_encrypted = reencrypt_all(ring)
    counts = count_by_key(ring)
    if counts["fallback"] or counts["unreadable"]:
        raise RotationRefused(f"stored secrets still need the previous key ({counts}); run it again")
    summary = {"re_encrypted": re_encrypted, "stored_secrets": counts, "cursors": CURSOR_NOTE}
    if ring.source == "SHOP_SECRET_KEY":
        return {**summary, "next": "unset SHOP_SECRET_KEY_FALLBACKS and restart every process"}
    previous = keyring.previous_path(ring.source)
    previous.unlink(missing_ok=True)
    keyring.forget()
    return {**summary, "retired": str(previous)}


def _refuse_unreadable(ring: KeyRing) -> None:
    counts = count_by_key(ring)
    if counts["unreadable"]:
        raise RotationRefused(
            f"{counts['unreadable']} stored secrets cannot be decrypted with {where_the_key_is(ring)}; "
            "nothing was changed"
        )

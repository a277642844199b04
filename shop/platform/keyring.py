"""The instance secret keys: the current one (encrypts, signs cursors) and fallbacks (still accepted).

With SHOP_SECRET_KEY the keys are the configured ones (SHOP_SECRET_KEY_FALLBACKS, a comma list, for
a rotation in progress). Without it they live in the instance folder, `secret_key` (the current key)
and `secret_key.previous` (fallbacks, one a line), and a running process re-reads both files when
they change (looked at once a second at most), so `rotate-secret-key` reaches every process on the
machine without a restart.
"""

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

# how stale a process's view of the key files may be; rotate-secret-key waits longer than this
REFRESH_SECONDS = 1.0
PREVIOUS_SUFFIX = ".previous"


@dataclass(frozen=True)
class KeyRing:
    current: str
    fallbacks: tuple[str, ...] = ()
    source: str = "SHOP_SECRET_KEY"  # or the key file's path

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key that opens a secret or a cursor, the current one first."""
        return (self.current, *(k for k in self.fallbacks if k != self.current))


def configured_fallbacks(config) -> tuple[str, ...]:
    """SHOP_SECRET_KEY_FALLBACKS: a comma list (or a list in instance/config.py)."""
    value = config.get("SECRET_KEY_FALLBACKS") or ()
    items = value.split(",") if isinstance(value, str) else value
    return tuple(str(item).strip() for item in items if str(item).strip())


def previous_path(key_file: str | Path) -> Path:
    """The file of the keys a rotation replaced: secret_key.previous beside the key file."""
    return Path(str(key_file) + PREVIOUS_SUFFIX)


def read_key_files(key_file: str | Path) -> tuple[str, tuple[str, ...]]:
    """The current key and the previous ones, as the files hold them now."""
    current = Path(key_file).read_text().strip()
    previous = previous_path(key_file)
    lines = previous.read_text().split() if previous.exists() else []
    return current, tuple(lines)


class _FileRing:
    """One key file's ring, re-read when a file changed (checked at most every REFRESH_SECONDS)."""

    def __init__(self, key_file: str, fallbacks: tuple[str, ...]):
        self.key_file, self.extra = key_file, fallbacks
        self.lock = threading.Lock()
        self.checked, self.stamp, self.ring = 0.0, None, None

    def get(self) -> KeyRing:
        now = time.monotonic()
        with self.lock:
            if self.ring is None or now - self.checked >= REFRESH_SECONDS:
                self.checked = now
                stamp = self._stamp()
                if stamp != self.stamp or self.ring is None:
                    current, previous = read_key_files(self.key_file)
                    self.stamp, self.ring = stamp, KeyRing(current, previous + self.extra, self.key_file)
            return self.ring

    def _stamp(self) -> tuple:
        stamps = []
        for path in (Path(self.key_file), previous_path(self.key_file)):
            try:
                info = os.stat(path)
                stamps.append((info.st_ino, info.st_mtime_ns, info.st_size))
            except FileNotFoundError:
                stamps.append(None)
        return tuple(stamps)


_file_rings: dict[tuple, _FileRing] = {}
_file_rings_lock = threading.Lock()


def ring(config) -> KeyRing:
    """The keys this configuration names now."""
    fallbacks = configured_fallbacks(config)
    key_file = config.get("SECRET_KEY_FILE")
    if not key_file:
        return KeyRing(str(config["SECRET_KEY"]), fallbacks)
    with _file_rings_lock:
        holder = _file_rings.setdefault((key_file, fallbacks), _FileRing(key_file, fallbacks))
    return holder.get()


def forget() -> None:
    """Drop every cached file ring (the next look re-reads the files)."""
    with _file_rings_lock:
        _file_rings.clear()

"""`flask shop backup DEST` and `restore SRC`: a consistent copy of the database with its secret key.

A backup is a directory: `manifest.json` (written last: a directory without it is not a backup),
the database (`shop.sqlite3`, or `shop.dump` in pg_dump's custom format) and the instance's
`secret_key` when the key in use comes from that file. It is built beside DEST and renamed into
place, so a failed backup leaves nothing behind.
"""

import hashlib
import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from shop import migrations
from shop.config import is_postgres
from shop.models import ALL_MODELS

FORMAT = 1
MANIFEST = "manifest.json"
SQLITE_FILE = "shop.sqlite3"
POSTGRES_FILE = "shop.dump"
KEY_FILE = "secret_key"
PAGES_PER_STEP = 1024  # 4 MiB of 4 KiB pages between progress reports
COPY_CHUNK = 4 * 1024 * 1024

Progress = Callable[[str], None]


class BackupError(Exception):
    """The backup or restore was refused or failed; what it names was left unchanged."""


def key_source(config) -> str:
    """Where the secret key in use comes from: the instance's `secret_key` file, or a setting."""
    path = Path(config.root_path) / KEY_FILE
    if path.is_file() and path.read_text().strip() == config["SECRET_KEY"]:
        return "instance_file"
    return "setting"


def sha256(path: Path) -> str:
    """The hex digest of a file (read in chunks: a database may be large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(COPY_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class Reporter:
    """Progress lines on stderr, at most one a second, and the last one always."""

    def __init__(self, progress: Progress, what: str):
        self.progress, self.what, self.last = progress, what, 0.0

    def __call__(self, done: int, total: int, unit: str) -> None:
        now = time.monotonic()
        if done < total and now - self.last < 1:
            return
        self.last = now
        share = 100 * done // total if total else 100
        self.progress(f"{self.what}: {done} of {total} {unit} ({share}%)")


# ---------------------------------------------------------------------------------------- backup


def prepare_destination(dest: Path) -> Path:
    """A new folder beside DEST to build the backup in; DEST must be missing or an empty folder."""
    if dest.exists() and not dest.is_dir():
        raise BackupError(f"{dest} is a file: name a new folder for the backup")
    if dest.is_dir() and any(dest.iterdir()):
        raise BackupError(f"{dest} is not empty: name a new folder (a backup never overwrites another)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=dest.parent))


def backup(dest: Path, config, progress: Progress, pages_per_step: int = PAGES_PER_STEP) -> dict:
    """Take a consistent copy of the configured database and its secret key into the folder DEST."""
    database, dest = config["DATABASE"], dest.resolve()
    if is_postgres(database):  # before anything is made: the command names DEST itself
        key = Path(config.root_path) / KEY_FILE
        then = f"\n  after `mkdir {dest}`, and copy {key} into it too unless SHOP_SECRET_KEY is set"
        require_client(*dump_command(database, dest / POSTGRES_FILE), then=then)
    work = prepare_destination(dest)
    try:
        if is_postgres(database):
            copied = dump_postgres(database, work / POSTGRES_FILE, progress)
        else:
            copied = copy_sqlite(database, work / SQLITE_FILE, pages_per_step, progress)
        manifest = write_manifest(work, database, copied, config)
        os.chmod(work, 0o700)  # the key and the data are as secret as the instance folder
        work.rename(dest)  # an empty DEST folder is replaced; a failure before here leaves none
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return {"backup": str(dest), **manifest}


def write_manifest(work: Path, database: str, copied: dict, config) -> dict:
    """Copy the key file when it is the key in use, then write the manifest of the folder (last)."""
    source = key_source(config)
    if source == "instance_file":
        shutil.copy2(Path(config.root_path) / KEY_FILE, work / KEY_FILE)
        os.chmod(work / KEY_FILE, 0o600)
    manifest = {
        "format": FORMAT,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "backend": "postgres" if is_postgres(database) else "sqlite",
        **copied,
        "secret_key": {"source": source, "included": source == "instance_file"},
        "files": {path.name: sha256(path) for path in sorted(work.iterdir())},
    }
    (work / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def copy_sqlite(source: str, target: Path, pages_per_step: int, progress: Progress) -> dict:
    """Copy a live SQLite file with the online backup API, from one read snapshot.

    The read transaction opened first pins the snapshot: in WAL mode writers go on meanwhile, and
    since this connection never starts a new read, SQLite never restarts the copy for their writes.
    """
    if not Path(source).is_file():
        raise BackupError(f"there is no database at {source}")
    reporter = Reporter(progress, "backup")
    src = sqlite3.connect(f"{Path(source).as_uri()}?mode=ro", uri=True, isolation_level=None, timeout=10)
    dst = sqlite3.connect(target)
    try:
        src.execute("BEGIN")
        version = _schema_version(src)  # the first read: the snapshot starts here
        src.backup(
            dst, pages=pages_per_step, progress=lambda _s, left, total: reporter(total - left, total, "pages")
        )
        src.execute("COMMIT")
        checked = dst.execute("PRAGMA integrity_check").fetchall()
    except sqlite3.Error as error:
        raise BackupError(f"the copy of {source} failed: {error}") from None
    finally:
        src.close()
        dst.close()
    if checked != [("ok",)]:
        raise BackupError(f"the copy failed its integrity check: {checked[:3]}")
    return {"database": SQLITE_FILE, "schema_version": version}


def _schema_version(conn: sqlite3.Connection) -> int:
    """The highest schema version recorded in a SQLite connection's database (0 if none)."""
    try:
        return conn.execute(f"SELECT COALESCE(MAX(version), 0) FROM {migrations.VERSION_TABLE}").fetchone()[0]
    except sqlite3.OperationalError:  # no version table: empty, or a release before versions
        return 0


def libpq_command(url: str, *args: str) -> tuple[list[str], dict]:
    """A pg_dump/pg_restore argument list for `url` without its password, and the env carrying it."""
    parts = urlsplit(url)
    env = dict(os.environ)
    netloc = parts.netloc
    if parts.password is not None:
        env["PGPASSWORD"] = unquote(parts.password)  # not in argv: every user of the box can read ps
        netloc = netloc.replace(f":{parts.password}@", "@", 1)
    return [*args, "--dbname", urlunsplit(parts._replace(netloc=netloc))], env


def shown(command: list[str], env: dict) -> str:
    """The command as an operator would type it, the password left for them to fill in."""
    password = "PGPASSWORD='...' " if env.get("PGPASSWORD") != os.environ.get("PGPASSWORD") else ""
    return password + shlex.join(command)


def run_client(command: list[str], env: dict, progress: Progress) -> None:
    """Run pg_dump or pg_restore; its verbose lines on stderr are the progress."""
    progress(f"running {shown(command, env)}")
    result = subprocess.run(command, env=env, stdout=subprocess.DEVNULL)
    if result.returncode != 0:
        raise BackupError(f"{command[0]} failed (exit {result.returncode}); its messages are above")


def require_client(command: list[str], env: dict, then: str = "") -> None:
    """Refuse, printing the exact command to run by hand, when pg_dump or pg_restore is not on PATH."""
    if shutil.which(command[0]) is None:
        raise BackupError(
            f"{command[0]} is not on PATH: install the PostgreSQL client tools (the server's major "
            f"version or newer), or run it yourself:\n  {shown(command, env)}{then}"
        )


def dump_command(url: str, target: Path) -> tuple[list[str], dict]:
    """pg_dump of the database at `url` into `target`, in the custom format (one snapshot)."""
    return libpq_command(url, "pg_dump", "--format=custom", "--verbose", "--file", str(target))


def dump_postgres(url: str, target: Path, progress: Progress) -> dict:
    """pg_dump the database at `url` into `target`."""
    run_client(*dump_command(url, target), progress)
    return {"database": POSTGRES_FILE, "schema_version": _postgres_version()}


def _postgres_version() -> int:
    """The schema version of the PostgreSQL database the app is on (the dump is of it)."""
    from shop.db import db

    return migrations.status(db, ALL_MODELS).version


# --------------------------------------------------------------------------------------- restore


def read_manifest(src: Path) -> dict:
    """The manifest of the backup folder SRC, its files checked against their recorded digests."""
    if not src.exists():
        raise BackupError(f"there is no backup at {src}")
    if not src.is_dir() or not (src / MANIFEST).is_file():
        raise BackupError(f"{src} is not a backup folder made by `shop backup` (no {MANIFEST})")
    try:
        manifest = json.loads((src / MANIFEST).read_text())
        files, database = dict(manifest["files"]), manifest["database"]
    except (ValueError, KeyError, TypeError) as error:
        raise BackupError(f"{src / MANIFEST} is not readable: {error}") from None
    if database not in files:
        raise BackupError(f"the manifest lists no database file ({database})")
    if any(Path(name).name != name for name in files):  # names of files in SRC, never paths
        raise BackupError(f"{src / MANIFEST} names a file outside the folder")
    for name, digest in files.items():
        if not (src / name).is_file() or sha256(src / name) != digest:
            raise BackupError(f"{src / name} is missing or damaged: its digest differs from the manifest's")
    return manifest


def restore(src: Path, config, force: bool, progress: Progress) -> dict:
    """Put the backup in folder SRC back as the configured database and instance secret key."""
    from shop.db import db

    src, database = src.resolve(), config["DATABASE"]
    manifest = read_manifest(src)
    holding = refuse_unsafe_restore(manifest, database, force)
    source = key_source(config)  # before the restore writes the key file
    if is_postgres(database):
        restore_postgres(src / manifest["database"], database, progress)
    else:
        install_sqlite(src / manifest["database"], Path(database), progress)
    cleared = clear_state_of_the_moment()
    state = migrations.status(db, ALL_MODELS)
    return {
        "restored": str(src),
        "database": _redacted(database) if is_postgres(database) else database,
        "replaced_rows_in": holding,
        "cleared": cleared,
        "schema_version": state.version,
        "schema": state.problem() or "current",
        "secret_key": restore_key(src, manifest, config, source),
    }


# the pipeline's and the consumers' state of the moment the backup was taken, not the shop's data: a
# restored rate bucket would still be drained by the burst that ran then, an auth-failure count would
# still block an address, a heartbeat would show a consumer that is not running (docs/decisions.md)
STATE_OF_THE_MOMENT = ("rate_bucket", "auth_failure", "consumer_heartbeat")


def clear_state_of_the_moment() -> list[str]:
    """Empty the tables of STATE_OF_THE_MOMENT in the restored database; the ones it emptied."""
    from shop.db import db, write_transaction

    present = set(db.get_tables())
    tables = [table for table in STATE_OF_THE_MOMENT if table in present]
    with write_transaction():
        for table in tables:
            db.execute_sql(f'DELETE FROM "{table}"')
    return tables


def refuse_unsafe_restore(manifest: dict, database: str, force: bool) -> list[str]:
    """Refuse another backend, a newer schema, or data without --force; the tables holding rows."""
    backend = "postgres" if is_postgres(database) else "sqlite"
    if manifest.get("backend") != backend:
        raise BackupError(f"the backup is of a {manifest.get('backend')} database; this one is {backend}")
    if int(manifest.get("schema_version", 0)) > migrations.head():
        raise BackupError(
            f"the backup is at schema version {manifest['schema_version']}, newer than this release "
            f"({migrations.head()}): restore it with the release that took it"
        )
    holding = tables_holding_rows()
    if holding and not force:
        raise BackupError(
            f"the database is not empty (rows in {', '.join(holding[:5])}): "
            "give --force to replace it with the backup"
        )
    return holding


def _redacted(url: str) -> str:
    from shop.transfer import redacted

    return redacted(url)


def tables_holding_rows() -> list[str]:
    """The app's tables that hold any row in the configured database (its version table aside)."""
    from shop.db import db

    present = set(db.get_tables())
    return [
        model._meta.table_name
        for model in ALL_MODELS
        if model._meta.table_name in present and model.select().limit(1).exists()
    ]


def install_sqlite(backup_file: Path, target: Path, progress: Progress) -> int:
    """Copy the backup beside the database, check it, then swap it in (its WAL files removed)."""
    from shop.db import db

    temporary = target.with_name(f".{target.name}.restoring")
    reporter, total, done = Reporter(progress, "restore"), backup_file.stat().st_size, 0
    with open(backup_file, "rb") as source, open(temporary, "wb") as copy:
        while chunk := source.read(COPY_CHUNK):
            copy.write(chunk)
            done += len(chunk)
            reporter(done, total, "bytes")
        copy.flush()
        os.fsync(copy.fileno())
    try:
        version = check_sqlite(temporary)
        db.close()  # this process's connection to the database being replaced
        for suffix in ("-wal", "-shm"):  # the old file's log must not be replayed onto the new one
            Path(f"{target}{suffix}").unlink(missing_ok=True)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
    return version


def check_sqlite(path: Path) -> int:
    """PRAGMA integrity_check of a restored copy, and its schema version."""
    conn = sqlite3.connect(path)
    try:
        checked = conn.execute("PRAGMA integrity_check").fetchall()
        version = _schema_version(conn)
        conn.execute("PRAGMA journal_mode=wal")  # as the app opens it
    except sqlite3.DatabaseError as error:
        raise BackupError(f"the backup's database is not readable: {error}") from None
    finally:
        conn.close()
    if checked != [("ok",)]:
        raise BackupError(f"the backup's database failed its integrity check: {checked[:3]}")
    return version


def restore_postgres(dump: Path, url: str, progress: Progress) -> None:
    """pg_restore the dump into the configured database, in one transaction (all or nothing)."""
    from shop.db import db

    db.close()  # pg_restore drops and recreates the tables this process may hold open
    command, env = libpq_command(
        url,
        "pg_restore",
        "--clean",
        "--if-exists",
        "--no-owner",
        "--single-transaction",
        "--exit-on-error",
        "--verbose",
        str(dump),
    )
    run_client(command, env, progress)


def restore_key(src: Path, manifest: dict, config, source: str) -> dict:
    """Install the backup's key file (a different one is kept aside); say which key is used."""
    if not manifest.get("secret_key", {}).get("included"):
        return {
            "restored": False,
            "note": "the backup holds no key file (SHOP_SECRET_KEY was set): keep SHOP_SECRET_KEY as it was",
        }
    path = Path(config.root_path) / KEY_FILE
    key = (src / KEY_FILE).read_text().strip()
    result = {"restored": True, "path": str(path)}
    if path.is_file() and path.read_text().strip() != key:
        os.replace(path, path.with_name(f"{KEY_FILE}.before-restore"))
        result["previous_key_kept_as"] = str(path.with_name(f"{KEY_FILE}.before-restore"))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    if source == "setting":
        result["note"] = "SHOP_SECRET_KEY is set and is used instead of the restored key file: unset it"
    return result

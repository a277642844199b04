"""A PostgreSQL server of a test's own, in a temporary folder on a free port, that the test may
restart and stop: the machine's shared server is never touched.

initdb refuses to run as root, so when the tests run as root the server's files belong to the
`postgres` OS user and initdb and pg_ctl run as that user (`runuser -u postgres --`).
"""

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.helpers.receivers import free_port

BIN_DIRS = ("/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin")


def bin_dir() -> str | None:
    """The folder holding initdb and pg_ctl, or None when this machine has none."""
    for folder in BIN_DIRS:
        if os.access(Path(folder) / "initdb", os.X_OK) and os.access(Path(folder) / "pg_ctl", os.X_OK):
            return folder
    found = shutil.which("initdb")
    return str(Path(found).parent) if found and shutil.which("pg_ctl") else None


def why_not() -> str | None:
    """Why no server of the test's own can be made here (None when one can)."""
    if bin_dir() is None:
        return "no initdb/pg_ctl on this machine"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no postgres OS user to run initdb as"
        if shutil.which("runuser") is None:
            return "running as root without runuser"
    return None


class OwnPostgres:
    """initdb into a temporary folder, then start/restart/stop with pg_ctl; trust auth, loopback only."""

    def __init__(self):
        self.folder = Path(tempfile.mkdtemp(prefix="shop-own-pg-"))
        self.data, self.log = self.folder / "data", self.folder / "server.log"
        self.port = free_port()
        self._as = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *argv: str, timeout: float = 60) -> None:
        result = subprocess.run(
            [*self._as, *argv], capture_output=True, text=True, timeout=timeout, cwd=self.folder
        )
        if result.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed: {result.stdout}{result.stderr}{self.server_log()}")

    def pg_ctl(self, *args: str, timeout: float = 60) -> None:
        self._run(f"{bin_dir()}/pg_ctl", "-D", str(self.data), *args, timeout=timeout)

    def server_log(self) -> str:
        try:
            return self.log.read_text()[-3000:]
        except OSError:
            return ""

    def init(self) -> "OwnPostgres":
        initdb = [f"{bin_dir()}/initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust"]
        self._run(*initdb, "-E", "UTF8", "--no-sync")
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c max_connections=100 "
            "-c fsync=off -c full_page_writes=off"
        )
        self._options = options
        self.pg_ctl("-o", options, "-l", str(self.log), "-w", "start")
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def restart(self, mode: str) -> None:
        """`pg_ctl restart -m MODE` (fast: clients are told and disconnected; immediate: a crash)."""
        self.pg_ctl("-o", self._options, "-l", str(self.log), "-m", mode, "-w", "restart")

    def stop(self) -> None:
        try:
            self.pg_ctl("-m", "immediate", "-w", "stop", timeout=30)
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
        shutil.rmtree(self.folder, ignore_errors=True)

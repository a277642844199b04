"""docs/operations.md as a test follows it: its named fenced blocks, with the box's paths moved."""

import re
from pathlib import Path

# a fenced block whose info string names it: ```ini /etc/repair-shop/shop.env
FENCE = re.compile(r"^```(\w+) (\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
SERVICE_USER = "sudo -u repair-shop "


def named_blocks(markdown: str) -> dict[str, str]:
    """Each named fenced block's text, by its name (a path, a unit, or a step such as first-start)."""
    return {name: body for _language, name, body in FENCE.findall(markdown)}


def unit_settings(unit: str) -> dict[str, str]:
    """A systemd unit's Key=Value lines (later sections win; enough for one [Service])."""
    return dict(line.split("=", 1) for line in unit.splitlines() if "=" in line and not line.startswith("#"))


def env_file(text: str) -> dict[str, str]:
    """The variables of an EnvironmentFile (KEY=VALUE lines; comments and blank lines skipped)."""
    pairs = (line.split("=", 1) for line in text.splitlines() if line.strip() and not line.startswith("#"))
    return {key.strip(): value.strip() for key, value in pairs}


def commands(block: str) -> list[str]:
    """The lines of a shell step that a test can run: as the service user, without sudo; no systemctl."""
    lines = [line.strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]
    return [line.removeprefix(SERVICE_USER) for line in lines if "systemctl" not in line]


class Box:
    """The guide's paths and address moved into a temporary folder and a free loopback port."""

    def __init__(self, root: Path, venv_bin: Path, port: int):
        self.root = root
        self.moves = {
            "/opt/repair-shop/venv/bin/": f"{venv_bin}/",
            "/usr/local/bin/repair-shop": str(root / "bin" / "repair-shop"),
            "/var/lib/repair-shop": str(root / "var-lib"),
            "/etc/repair-shop": str(root / "etc"),
            "/var/backups/repair-shop": str(root / "backups"),
            "127.0.0.1:8000": f"127.0.0.1:{port}",
        }
        for folder in ("bin", "var-lib", "etc", "backups"):
            (root / folder).mkdir(parents=True, exist_ok=True)

    def moved(self, text: str) -> str:
        for old, new in self.moves.items():
            text = text.replace(old, new)
        return text

    def write(self, path: str, text: str, mode: int = 0o600) -> Path:
        """Write a file the guide shows at `path`, at its moved place."""
        target = Path(self.moved(path))
        target.write_text(self.moved(text))
        target.chmod(mode)
        return target

"""Every benchmark of bench/run_all.py starts (its --help), so a broken import shows in the suite,
not in the next measuring run (three of them once failed at import, unseen). Nothing is measured."""

import subprocess
import sys

import pytest

from tests.helpers.processes import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from run_all import BENCHMARKS  # noqa: E402

sys.path.remove(str(ROOT / "bench"))
pytestmark = pytest.mark.sqlite_only  # no database is opened: once is enough


@pytest.mark.parametrize("script", [entry[0] for entry in BENCHMARKS])
def test_the_benchmark_starts(script):
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout

"""Every benchmark in turn, bounded, and one table of their goals: workload, figure, baseline, ratio,
goal, met, with the load average before and after each (docs/performance.md is refreshed from it).

Each benchmark ends with `BENCH-RESULT {json}` lines (bench/bench_result.py); this runs them with
short settings (a few minutes in all), collects those lines and prints the table, in Markdown with
`--markdown`. Exits 0 when every goal is met, 1 when one is missed, 2 when a benchmark failed.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench_result import PREFIX

HERE = Path(__file__).resolve().parent
# (script, its bounded arguments, the longest it may take in seconds); benchmarks added by later
# work join this list
BENCHMARKS = (
    ("platform.py", ["--duration", "5", "--rounds", "3"], 300),
    ("slots.py", ["--calls", "100"], 600),
    ("notifications.py", ["--rounds", "7"], 600),
    ("messages.py", ["--count", "300", "--rounds", "3"], 300),
    ("webhooks.py", ["--count", "1000", "--rounds", "3"], 300),
    ("records.py", [], 600),
    ("payments.py", ["--calls", "300"], 300),
    ("reminders.py", ["--count", "200", "--rounds", "2"], 600),
    ("calendar_feed.py", ["--fresh", "10", "--cached", "200"], 300),
    ("inbound.py", ["--count", "500", "--emails", "100"], 300),
    # one round read 0.47 and 0.67 for the same webhooks workload a minute apart: a median of three
    ("backends.py", ["--rounds", "3"], 900),
)


def load_average() -> str:
    """The 1-minute load average, as /proc/loadavg states it."""
    return f"{os.getloadavg()[0]:.2f}"


def run_one(script: str, arguments: list, limit: int) -> tuple[list, str | None]:
    """Run one benchmark; its result lines and, when it failed to produce any, why."""
    command = [sys.executable, str(HERE / script), *arguments]
    try:
        done = subprocess.run(command, cwd=HERE.parent, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return [], f"stopped after {limit} s"
    results = [
        json.loads(line[len(PREFIX) :]) for line in done.stdout.splitlines() if line.startswith(PREFIX)
    ]
    if not results:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return [], f"exit {done.returncode}, no result line: {' | '.join(tail)}"
    return results, None


def table(rows: list, markdown: bool) -> str:
    """The rows as a fixed-width text table or a Markdown one."""
    header = ["bench", "workload", "figure", "baseline", "unit", "ratio", "goal", "met", "load before/after"]
    cells = [
        [
            row["bench"],
            row["workload"],
            f"{row['figure']:,.1f}",
            f"{row['baseline']:,.1f}",
            row["unit"],
            f"{row['ratio']:.3f}",
            row["goal"],
            "yes" if row["met"] else "**no**" if markdown else "NO",
            row["load"],
        ]
        for row in rows
    ]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return "\n".join(lines + ["| " + " | ".join(cell) + " |" for cell in cells])
    widths = [max(len(str(line[i])) for line in [header, *cells]) for i in range(len(header))]
    return "\n".join(
        "  ".join(str(value).ljust(width) for value, width in zip(line, widths, strict=True))
        for line in [header, *cells]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="SCRIPT", help="run only these (e.g. platform.py)")
    parser.add_argument("--markdown", action="store_true", help="print the table in Markdown")
    args = parser.parse_args()
    chosen = [bench for bench in BENCHMARKS if not args.only or bench[0] in args.only]
    rows, failures, started = [], [], time.monotonic()
    for script, arguments, limit in chosen:
        before = load_average()
        print(f"running {script} {' '.join(arguments)} (load {before})", flush=True)
        results, failure = run_one(script, arguments, limit)
        load = f"{before} / {load_average()}"
        if failure:
            failures.append(f"{script}: {failure}")
        rows += [{"bench": script, "load": load, **result} for result in results]
    print(f"\n{len(chosen)} benchmarks in {time.monotonic() - started:.0f} s on {os.cpu_count()} cores\n")
    print(table(rows, args.markdown))
    for failure in failures:
        print(f"FAILED {failure}")
    if failures:
        return 2
    return 0 if all(row["met"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

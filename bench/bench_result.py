"""The one line a benchmark prints per goal, `BENCH-RESULT {json}`, that bench/run_all.py collects."""

import json
import os
import statistics
from pathlib import Path

PREFIX = "BENCH-RESULT "


def report_result(
    workload: str, figure: float, baseline: float, unit: str, goal: float, at_least: bool, ratio=None
) -> bool:
    """Print the workload's figure against its same-run baseline; whether the ratio meets the goal
    (`at_least`: ratio >= goal, a throughput; else ratio <= goal, a latency that must not grow)."""
    if ratio is None:  # a bench judged on a median of per-round ratios passes that median
        ratio = figure / baseline if baseline else float("inf")
    met = ratio >= goal if at_least else ratio <= goal
    line = {
        "workload": workload,
        "figure": round(figure, 3),
        "baseline": round(baseline, 3),
        "unit": unit,
        "ratio": round(ratio, 3),
        "goal": f"{'>=' if at_least else '<='} {goal}",
        "met": met,
    }
    print(PREFIX + json.dumps(line), flush=True)
    return met


def report_median(workload: str, rounds: list, figure: str, baseline: str, unit: str, goal: float) -> float:
    """report_result for a throughput judged on the median ratio of its rounds (each round a dict
    with its `ratio` and the two rates under the keys `figure` and `baseline`): that median."""
    ratio = statistics.median(r["ratio"] for r in rounds)
    report_result(
        workload,
        statistics.median(r[figure] for r in rounds),
        statistics.median(r[baseline] for r in rounds),
        unit,
        goal,
        at_least=True,
        ratio=ratio,
    )
    return ratio


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

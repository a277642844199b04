"""Several processes on one database: the bucket never over-grants, an idempotency key runs once."""

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from shop.models import Customer

ROOT = Path(__file__).resolve().parents[2]


def hammer(args, extra_env=None, processes=2) -> Counter:
    env = dict(os.environ, **(extra_env or {}))
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.platform.hammer", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    total = Counter()
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        total.update(json.loads(out.strip().splitlines()[-1]))
    return total


def test_two_processes_never_overdraw_one_bucket(acme):
    # no refill: whatever the interleaving, exactly `capacity` requests may pass
    statuses = hammer(
        ["sk_test_acme_token_0001", "60"], {"SHOP_RATE_LIMIT_CAPACITY": "50", "SHOP_RATE_LIMIT_REFILL": "0"}
    )
    assert statuses == Counter({"200": 50, "429": 70})


def test_two_processes_share_one_idempotency_key_and_it_runs_once(acme):
    statuses = hammer(["sk_test_acme_token_0001", "5", "one-key-two-processes"])
    assert statuses["201"] == 1
    assert statuses["201"] + statuses["201 replay"] + statuses["409"] == 10
    assert Customer.select().count() == 1

"""python -m tasks: run the Huey consumer (what `flask shop worker` runs)."""

import os

from tasks.worker import run

run(int(os.environ.get("SHOP_CONSUMER_WORKERS", "4")))

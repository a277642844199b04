"""python -m tasks [--no-periodic]: run the Huey consumer (what `flask shop worker` runs)."""

import os
import sys

from tasks.worker import NO_PERIODIC, run

run(int(os.environ.get("SHOP_CONSUMER_WORKERS", "4")), periodic=NO_PERIODIC not in sys.argv[1:])

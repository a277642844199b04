"""python -m tasks: run the Huey consumer (what `flask shop worker` runs)."""

from tasks.worker import run

run()

"""The consumer entry point shared by `flask shop worker`, `python -m tasks` and the demo."""

import logging

from shop.platform import redaction
from tasks import huey


def run(workers: int = 4) -> None:
    """Run the Huey consumer with thread workers and the periodic scheduler until stopped."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    redaction.install()
    consumer = huey.create_consumer(workers=workers, worker_type="thread", periodic=True,
                                    check_worker_health=True)
    consumer.run()

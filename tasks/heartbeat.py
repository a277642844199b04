"""The consumer's heartbeat: a thread that upserts this process's row every few seconds."""

import contextlib
import logging
import threading

from shop import clock
from shop.db import db, unavailable
from shop.domain import heartbeat

log = logging.getLogger("shop.heartbeat")


class Heartbeat:
    """Beats once at start (so health sees the consumer at once), then every `interval` seconds.

    A thread of its own rather than a periodic task: Huey's periodic tasks have a one-minute
    granularity and run only on the consumer that runs them, and every consumer must beat.
    """

    def __init__(self, periodic: bool, interval: float):
        self.consumer_id = heartbeat.new_consumer_id()
        self.periodic, self.interval = periodic, interval
        self.started_at = clock.now()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)

    def start(self) -> "Heartbeat":
        """Forget consumers long gone, beat now, then keep beating in the background."""
        heartbeat.forget()
        self._beat()
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop beating and remove this consumer's row: a consumer stopped on purpose is gone."""
        self._stop.set()
        self._thread.join(timeout=self.interval + 5)
        try:
            heartbeat.forget(self.consumer_id)
        except Exception:
            log.warning("could not remove this consumer's heartbeat row", exc_info=True)

    def _run(self) -> None:
        pause = None  # after a failed beat: seconds until the next try
        try:
            while not self._stop.wait(self.interval if pause is None else pause):
                # after a failed beat the next comes sooner (1 s, doubling up to the interval), so
                # health sees the consumer again within seconds of the database's return
                if self._beat():
                    pause = None
                else:
                    pause = 1.0 if pause is None else min(2 * pause, self.interval)
        finally:
            with contextlib.suppress(Exception):
                db.close()  # the thread's own connection

    def _beat(self) -> bool:
        """Write this consumer's beat; whether it was written."""
        try:
            heartbeat.beat(self.consumer_id, self.periodic, self.started_at)
            return True
        except Exception as error:  # a database that does not answer: health will say the beat is stale
            if unavailable(error):
                log.warning("consumer heartbeat not written: database unavailable (%s)", str(error)[:200])
            else:
                log.warning("consumer heartbeat not written", exc_info=True)
            with contextlib.suppress(Exception):
                db.close()  # a broken connection is not reused: the next beat opens a new one
            return False

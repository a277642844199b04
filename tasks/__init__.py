"""The consumer's entry (`huey_consumer tasks.huey`): the queue of shop.queue and every job module."""

from shop.queue import huey
from tasks import maintenance, messages, webhooks  # noqa: F401  (registers the jobs with the consumer)

__all__ = ["huey"]

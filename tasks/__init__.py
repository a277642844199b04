"""The consumer's entry (`huey_consumer tasks.huey`): the queue of shop.queue and every job module."""

from shop.queue import huey
from tasks import maintenance, messages, reminders, webhooks  # noqa: F401  (registers the jobs with the consumer)
from tasks.worker import ShopConsumer

huey.consumer_class = ShopConsumer  # `huey_consumer tasks.huey` runs the service's start-up too

__all__ = ["huey"]

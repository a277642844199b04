"""Peewee models, a module per domain; ALL_MODELS is what init-db creates (shop/migrations changes)."""

from shop.models.appointments import Appointment, AppointmentReminder, SlotHold
from shop.models.billing import Estimate, Invoice, Payment, Refund
from shop.models.calendar_feeds import CalendarFeed
from shop.models.console import ConsoleSession
from shop.models.events import Event
from shop.models.inbox import Notification
from shop.models.leads import Lead
from shop.models.messaging import Conversation, Message, Suppression
from shop.models.platform import AuthFailure, ConsumerHeartbeat, IdempotencyRecord, RateBucket, UsageLog
from shop.models.records import Customer, Ticket
from shop.models.tenancy import ApiKey, Tenant, TenantSmsNumber, User
from shop.models.webhooks import WebhookDelivery, WebhookDeliveryAttempt, WebhookRecovery, WebhookSubscription

ALL_MODELS = (
    Tenant,
    TenantSmsNumber,
    User,
    ApiKey,
    Customer,
    Ticket,
    Appointment,
    SlotHold,
    CalendarFeed,
    AppointmentReminder,
    Notification,
    Invoice,
    Estimate,
    Payment,
    Refund,
    Lead,
    Event,
    Conversation,
    Message,
    Suppression,
    WebhookSubscription,
    WebhookDelivery,
    WebhookDeliveryAttempt,
    WebhookRecovery,
    RateBucket,
    AuthFailure,
    IdempotencyRecord,
    UsageLog,
    ConsumerHeartbeat,
    ConsoleSession,
)

__all__ = [m.__name__ for m in ALL_MODELS] + ["ALL_MODELS"]


def empty_tables() -> None:
    """Delete every row of the app's tables and the job queue's (`shop demo --reset`)."""
    from shop.db import db, on_postgres, write_transaction
    from shop.queue import huey

    if on_postgres():
        tables = ", ".join(f'"{model._meta.table_name}"' for model in ALL_MODELS)
        db.execute_sql(f"TRUNCATE {tables} RESTART IDENTITY CASCADE")
    else:
        with write_transaction():
            for model in reversed(ALL_MODELS):
                model.delete().execute()
    huey.flush()


def create_tables() -> None:
    """Create a new (empty) database at the current schema version, or check that it is at it.

    A database at another version raises SchemaOutOfDate naming the migrate command: the code of
    this release must not write to tables it was not written for. The job queue's tables are
    created too when missing: Huey would otherwise create its own when the queue is first used,
    which may be inside a transaction that then rolls them back.
    """
    from shop import migrations
    from shop.db import db
    from shop.queue_storage import queue_ddl

    migrations.create_current(db, ALL_MODELS)
    problem = migrations.status(db, ALL_MODELS).problem()
    if problem:
        raise migrations.SchemaOutOfDate(problem)
    with db.atomic():
        for statement in queue_ddl():
            db.execute_sql(statement)

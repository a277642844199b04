"""The webhook attempt log, recoveries and the operator notices of issue 17.

New tables `webhook_delivery_attempt` (one row per attempt, written before its request goes out)
and `webhook_recovery` (a recover request worked through in batches); new columns
`webhook_delivery.run_trigger` (what queued the current run of attempts) and
`webhook_subscription.dead_notice_on` (the day of the last "delivery dead" inbox notice).
"""

from peewee import (
    BooleanField,
    CharField,
    DateField,
    DateTimeField,
    ForeignKeyField,
    IntegerField,
    Model,
    TextField,
)


def _tables(db):
    """The two new tables as they are at this version, frozen here (the models will move on)."""

    class Base(Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Tenant(Base):
        id = CharField(primary_key=True)

    class WebhookSubscription(Base):
        id = CharField(primary_key=True)

    class WebhookDelivery(Base):
        id = CharField(primary_key=True)

    class WebhookDeliveryAttempt(Base):
        id = CharField(primary_key=True, max_length=40)
        tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
        delivery = ForeignKeyField(WebhookDelivery, on_delete="CASCADE", index=False)
        subscription = ForeignKeyField(WebhookSubscription, on_delete="CASCADE", index=False)
        number = IntegerField()
        trigger = CharField(max_length=16)
        status = CharField(max_length=16, default="started")
        started_at = DateTimeField()
        finished_at = DateTimeField(null=True)
        duration_ms = IntegerField(null=True)
        address = CharField(max_length=64, null=True)
        request_headers = TextField()
        response_status = IntegerField(null=True)
        response_headers = TextField(null=True)
        response_body = TextField(null=True)
        error = TextField(null=True)

        class Meta:
            indexes = (
                (("delivery", "started_at", "id"), False),
                (("subscription", "started_at", "status", "duration_ms"), False),
            )

    class WebhookRecovery(Base):
        id = CharField(primary_key=True, max_length=40)
        tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
        subscription = ForeignKeyField(WebhookSubscription, on_delete="CASCADE", index=False)
        since = DateTimeField()
        until = DateTimeField()
        statuses = TextField()
        dry_run = BooleanField(default=False)
        count = IntegerField(default=0)
        requeued = IntegerField(default=0)
        status = CharField(max_length=16, default="running")
        running = IntegerField(null=True)
        after_created_at = DateTimeField(null=True)
        after_id = CharField(max_length=40, null=True)
        created_at = DateTimeField()
        finished_at = DateTimeField(null=True)

        class Meta:
            indexes = ((("subscription", "running"), True),)

    return [WebhookDeliveryAttempt, WebhookRecovery]


def up(migrator, db) -> None:
    """Add the two columns, then create the two tables with their indexes."""
    migrator.migrate(
        migrator.add_column("webhook_delivery", "run_trigger", CharField(max_length=16, default="initial")),
        migrator.add_column("webhook_subscription", "dead_notice_on", DateField(null=True)),
    )
    db.create_tables(_tables(db))

"""Appointment reminders and customer messages (issue 25): the appointment_reminder table, and
`message.automated` (what the shop sends by itself stays outside the tenant's API send rate), with
the send-rate index rebuilt to cover the new condition.

The table is declared here as it stands at this version (not imported from shop.models), so the
script keeps creating the same table whatever the models become later.
"""

from peewee import (
    SQL,
    BooleanField,
    CharField,
    DateTimeField,
    ForeignKeyField,
    IntegerField,
    Model,
    TextField,
)


def _reminder_model(db):
    """appointment_reminder as of this version, bound to `db`."""

    class Tenant(Model):
        id = CharField(primary_key=True, max_length=64)

        class Meta:
            database = db
            table_name = "tenant"

    class Appointment(Model):
        class Meta:
            database = db
            table_name = "appointment"

    class AppointmentReminder(Model):
        id = CharField(primary_key=True, max_length=40)
        tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
        appointment = ForeignKeyField(Appointment, on_delete="CASCADE", index=False)
        kind = CharField(max_length=16)
        before_minutes = IntegerField(null=True)
        channels = TextField(null=True)
        starts_at = DateTimeField()
        scheduled_for = DateTimeField()
        status = CharField(max_length=16, default="pending")
        reason = CharField(max_length=32, null=True)
        channel = CharField(max_length=8, null=True)
        message_id = IntegerField(null=True)
        created_at = DateTimeField()
        updated_at = DateTimeField()

        class Meta:
            database = db
            table_name = "appointment_reminder"
            indexes = (
                (("status", "scheduled_for", "id"), False),
                (("appointment", "scheduled_for", "id"), False),
            )

    return AppointmentReminder


def up(migrator, db) -> None:
    """Create appointment_reminder; add message.automated (existing rows: false) and rebuild the
    send-rate index as (tenant, direction, automated, created_at)."""
    db.create_tables([_reminder_model(db)])
    migrator.migrate(
        migrator.add_column(
            "message", "automated", BooleanField(default=False, constraints=[SQL("DEFAULT FALSE")])
        ),
    )
    db.execute_sql('DROP INDEX IF EXISTS "message_tenant_id_direction_created_at"')
    migrator.migrate(
        migrator.add_index("message", ("tenant_id", "direction", "automated", "created_at"), False)
    )

"""Slot holds (issue 15): the slot_hold table, and the service and buffers a booking was made with.

The table is declared here as it stands at this version (not imported from shop.models), so the
script keeps creating the same table whatever the models become later.
"""

from peewee import SQL, CharField, DateField, DateTimeField, ForeignKeyField, IntegerField, Model


def _minutes() -> IntegerField:
    """Buffer minutes: 0 by default in the database too, so a writer that leaves them out still works."""
    return IntegerField(default=0, constraints=[SQL("DEFAULT 0")])


def _hold_model(db):
    """slot_hold as of this version, bound to `db`."""

    class Tenant(Model):
        id = CharField(primary_key=True, max_length=64)

        class Meta:
            database = db
            table_name = "tenant"

    class SlotHold(Model):
        id = CharField(primary_key=True, max_length=40)
        tenant = ForeignKeyField(Tenant, backref="slot_holds", on_delete="CASCADE")
        scheduled_date = DateField()
        scheduled_time = CharField(max_length=5)
        duration_minutes = IntegerField()
        service_id = CharField(max_length=40, null=True)
        tech_id = CharField(max_length=40, null=True)
        buffer_before_minutes = _minutes()
        buffer_after_minutes = _minutes()
        status = CharField(max_length=16, default="active")
        expires_at = DateTimeField()
        created_at = DateTimeField()
        released_at = DateTimeField(null=True)
        appointment_id = IntegerField(null=True)

        class Meta:
            database = db
            table_name = "slot_hold"
            indexes = ((("tenant", "scheduled_date", "status"), False),)

    return SlotHold


def up(migrator, db) -> None:
    """Create slot_hold; add service_id and the two buffers to appointment (existing rows: none, 0, 0)."""
    migrator.migrate(
        migrator.add_column("appointment", "service_id", CharField(max_length=40, null=True)),
        migrator.add_column("appointment", "buffer_before_minutes", _minutes()),
        migrator.add_column("appointment", "buffer_after_minutes", _minutes()),
    )
    db.create_tables([_hold_model(db)])

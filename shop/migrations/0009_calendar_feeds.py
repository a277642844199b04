"""Calendar feeds (issue 25): the `calendar_feed` table, and `appointment.sequence`.

`sequence` is the iCalendar SEQUENCE of an appointment's event: raised on every change of date,
time, duration or status, so a subscribed calendar takes the newer version. Existing rows start at
0. The table is declared here as it stands at this version (not imported from shop.models).
"""

from peewee import SQL, BooleanField, CharField, DateTimeField, ForeignKeyField, IntegerField, Model


def _feed_model(db):
    """calendar_feed as of this version, bound to `db`."""

    class Tenant(Model):
        id = CharField(primary_key=True, max_length=64)

        class Meta:
            database = db
            table_name = "tenant"

    class CalendarFeed(Model):
        id = CharField(primary_key=True, max_length=40)
        tenant = ForeignKeyField(Tenant, backref="calendar_feeds", on_delete="CASCADE")
        token_hash = CharField(max_length=64, unique=True)
        tech_id = CharField(max_length=40, null=True)
        hide_customer_names = BooleanField(default=False)
        description = CharField(max_length=255, null=True)
        created_by = CharField(max_length=320, null=True)
        created_at = DateTimeField()
        last_fetched_at = DateTimeField(null=True)
        revoked_at = DateTimeField(null=True)
        revoked_by = CharField(max_length=320, null=True)

        class Meta:
            database = db
            table_name = "calendar_feed"
            indexes = ((("tenant", "revoked_at", "created_at"), False),)

    return CalendarFeed


def up(migrator, db) -> None:
    """Add appointment.sequence (0 for existing rows) and create calendar_feed."""
    migrator.migrate(
        migrator.add_column(
            "appointment", "sequence", IntegerField(default=0, constraints=[SQL("DEFAULT 0")])
        ),
    )
    db.create_tables([_feed_model(db)])

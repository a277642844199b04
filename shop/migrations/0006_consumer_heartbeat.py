"""Consumer heartbeats (issue 14, point 3): the consumer_heartbeat table that health reads.

Declared here as it stands at this version (not imported from shop.models), so the script keeps
creating the same table whatever the model becomes later.
"""

from peewee import BooleanField, CharField, DateTimeField, IntegerField, Model


def _heartbeat_model(db):
    """consumer_heartbeat as of this version, bound to `db`."""

    class ConsumerHeartbeat(Model):
        id = CharField(primary_key=True, max_length=64)
        host = CharField(max_length=255)
        pid = IntegerField()
        periodic = BooleanField()
        started_at = DateTimeField()
        beat_at = DateTimeField(index=True)

        class Meta:
            database = db
            table_name = "consumer_heartbeat"

    return ConsumerHeartbeat


def up(migrator, db) -> None:
    """Create the table and its index on beat_at."""
    db.create_tables([_heartbeat_model(db)])

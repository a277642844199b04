"""The token bucket's numbers in double precision on PostgreSQL.

The 0ff0c57 release declared them FloatField, which PostgreSQL stores as a 4-byte REAL: epoch
seconds lose about two minutes there, so a bucket could refill late or early. SQLite's REAL is
already 8 bytes, so nothing changes on SQLite.
"""

from peewee import DoubleField
from playhouse.migrate import PostgresqlMigrator


def up(migrator, db) -> None:
    """ALTER the two columns to double precision (PostgreSQL only)."""
    if not isinstance(migrator, PostgresqlMigrator):
        return
    migrator.migrate(
        migrator.alter_column_type("rate_bucket", "tokens", DoubleField()),
        migrator.alter_column_type("rate_bucket", "updated_at", DoubleField()),
    )

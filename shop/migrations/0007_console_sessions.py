"""The console's sign-in sessions (issue 16): a new table `console_session`."""

from peewee import CharField, DateTimeField, ForeignKeyField, Model


def _tables(db):
    """The new table as it is at this version, frozen here (the model will move on)."""

    class Base(Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Tenant(Base):
        id = CharField(primary_key=True)

    class ApiKey(Base):
        id = CharField(primary_key=True)

    class ConsoleSession(Base):
        id = CharField(primary_key=True, max_length=64)
        tenant = ForeignKeyField(Tenant, on_delete="CASCADE", index=False)
        api_key = ForeignKeyField(ApiKey, on_delete="CASCADE")
        csrf_token = CharField(max_length=64)
        created_at = DateTimeField()
        last_seen_at = DateTimeField(index=True)

    return [ConsoleSession]


def up(migrator, db) -> None:
    """Create the table with its indexes."""
    db.create_tables(_tables(db))

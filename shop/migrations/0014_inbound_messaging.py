"""Two-way messaging (issue 26): the tenant's SMS numbers, inbound address and help text; inbound
dedupe and receipt lookups on message; wider delivery statuses; why a number is suppressed.

The new table is declared here as it stands at this version (not imported from shop.models), so
the script keeps creating the same table whatever the models become later.
"""

from peewee import SQL, CharField, ForeignKeyField, IntegerField, Model, TextField
from playhouse.migrate import PostgresqlMigrator


def _number_model(db):
    """tenant_sms_number as of this version, bound to `db`."""

    class Tenant(Model):
        id = CharField(primary_key=True, max_length=64)

        class Meta:
            database = db
            table_name = "tenant"

    class TenantSmsNumber(Model):
        number = CharField(primary_key=True, max_length=16)
        tenant = ForeignKeyField(Tenant, backref="sms_numbers", on_delete="CASCADE")
        position = IntegerField(default=0)

        class Meta:
            database = db
            table_name = "tenant_sms_number"

    return TenantSmsNumber


def up(migrator, db) -> None:
    """Add the columns and indexes, widen delivery_status, create tenant_sms_number."""
    operations = [
        migrator.add_column("tenant", "inbound_email", CharField(max_length=320, null=True)),
        migrator.add_column("tenant", "help_text", TextField(null=True)),
        migrator.add_index("tenant", ("inbound_email",), True),
        migrator.add_column("message", "inbound_key", CharField(max_length=255, null=True)),
        migrator.add_index("message", ("tenant_id", "inbound_key"), True),
        migrator.add_column("message", "full_body", TextField(null=True)),
        migrator.add_index("message", ("external_uuid",), False),
        migrator.add_column(
            "suppression",
            "reason",
            CharField(max_length=32, default="manual", constraints=[SQL("DEFAULT 'manual'")]),
        ),
    ]
    if isinstance(migrator, PostgresqlMigrator):  # SQLite does not enforce a varchar's length
        operations.append(migrator.alter_column_type("message", "delivery_status", CharField(max_length=16)))
    migrator.migrate(*operations)
    db.create_tables([_number_model(db)])

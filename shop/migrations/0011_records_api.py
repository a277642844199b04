"""The records' own API (issue 24): the ticket's fields, the tenant's ticket statuses, list indexes.

- ticket: `description`, `device`, `serial_number`, `assigned_user_id`, `priority` (`normal` for
  the rows there are, in the database's default too) and `due_at`;
- tenant: `ticket_statuses` (a JSON list; null means the default five);
- indexes `(tenant_id, created_at, id)` and `(tenant_id, status, created_at, id)` on ticket, and
  `(tenant_id, created_at, id)` on lead: a list page, newest first, seeks its index to the cursor
  and reads one page's rows whatever the number of tickets (bench/records.py).
"""

from peewee import SQL, CharField, DateTimeField, IntegerField, TextField

INDEXES = (
    ("ticket", "ticket_tenant_id_created_at_id", ("tenant_id", "created_at", "id")),
    ("ticket", "ticket_tenant_id_status_created_at_id", ("tenant_id", "status", "created_at", "id")),
    ("lead", "lead_tenant_id_created_at_id", ("tenant_id", "created_at", "id")),
)


def up(migrator, db) -> None:
    """Add the columns (existing tickets: no device, priority normal), then the list indexes."""
    migrator.migrate(
        migrator.add_column("ticket", "description", TextField(null=True)),
        migrator.add_column("ticket", "device", CharField(max_length=255, null=True)),
        migrator.add_column("ticket", "serial_number", CharField(max_length=255, null=True)),
        migrator.add_column("ticket", "assigned_user_id", IntegerField(null=True)),
        migrator.add_column(
            "ticket",
            "priority",
            CharField(max_length=16, default="normal", constraints=[SQL("DEFAULT 'normal'")]),
        ),
        migrator.add_column("ticket", "due_at", DateTimeField(null=True)),
        migrator.add_column("tenant", "ticket_statuses", TextField(null=True)),
    )
    for table, name, columns in INDEXES:
        db.execute_sql(f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" ({", ".join(columns)})')

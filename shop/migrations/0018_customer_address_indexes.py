"""Indexes on customer(tenant_id, phone) and customer(tenant_id, LOWER(email)): the customer an
inbound SMS or email comes from, the customers a STOP or START applies to, and a reminder's customer
are found by the shop and the address. Without them each such look-up read every customer of the
shop (docs/performance.md, "Inbound messaging").
"""

# the name the model gives its email index (shop.models.records.EMAIL_INDEX), written out: a migration
# stays as it was written whatever the models become
EMAIL_INDEX = "customer_tenant_id_lower_email"


def up(migrator, db) -> None:
    """Add the indexes the model declares (Customer.Meta.indexes and Customer's email index), under
    the names the model gives them."""
    migrator.migrate(migrator.add_index("customer", ("tenant_id", "phone"), False))
    db.execute_sql(f'CREATE INDEX IF NOT EXISTS "{EMAIL_INDEX}" ON "customer" ("tenant_id", LOWER("email"))')

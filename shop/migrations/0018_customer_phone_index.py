"""An index on customer(tenant_id, phone): the customer an inbound SMS comes from and the customers
a STOP or START applies to are found by the shop and the number. Without it each such look-up read
every customer of the shop (docs/performance.md, "Inbound messaging").
"""


def up(migrator, db) -> None:
    """Add the index the model declares (Customer.Meta.indexes), under peewee's name for it."""
    migrator.migrate(migrator.add_index("customer", ("tenant_id", "phone"), False))

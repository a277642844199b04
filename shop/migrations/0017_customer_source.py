"""Where a customer came from (issue 27, item 3): `customer.source`, free text of at most 64
characters like a lead's (`walk_in`, `phone_call`, `web_form`, `referral`, ...); a customer made by
converting a lead takes the lead's source. Existing customers keep none.
"""

from peewee import CharField


def up(migrator, db) -> None:
    """Add the nullable column."""
    migrator.migrate(migrator.add_column("customer", "source", CharField(max_length=64, null=True)))

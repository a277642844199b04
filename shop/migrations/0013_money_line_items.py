"""Line items of estimates and invoices (issue 24, the records' API): a JSON text column on each.

An estimate's or invoice's `total` is the sum of its line items' amounts when the API created it;
rows from before (and from in-app activity, which gives a total alone) keep an empty list.
"""

from peewee import SQL, TextField


def up(migrator, db) -> None:
    """Add line_items (JSON text, '[]' for the rows already there) to estimate and invoice."""
    migrator.migrate(
        migrator.add_column(
            "estimate", "line_items", TextField(default="[]", constraints=[SQL("DEFAULT '[]'")])
        ),
        migrator.add_column(
            "invoice", "line_items", TextField(default="[]", constraints=[SQL("DEFAULT '[]'")])
        ),
    )

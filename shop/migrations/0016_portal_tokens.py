"""The customer's portal (issue 27): a secret link per sent estimate and invoice, and the name the
customer typed to decide an estimate.

`portal_token_hash` keeps the SHA-256 of the link's token (the token itself is only in the email);
a new token replaces it each time the document is sent. `decision_name` joins the decision's other
evidence (address, browser) on the estimate, never in an event.
"""

from peewee import CharField


def up(migrator, db) -> None:
    """Add the token hashes (each with a unique index) and the estimate's typed name."""
    migrator.migrate(
        migrator.add_column("estimate", "portal_token_hash", CharField(max_length=64, null=True)),
        migrator.add_column("estimate", "decision_name", CharField(max_length=255, null=True)),
        migrator.add_column("invoice", "portal_token_hash", CharField(max_length=64, null=True)),
        migrator.add_index("estimate", ("portal_token_hash",), True),
        migrator.add_index("invoice", ("portal_token_hash",), True),
    )

"""An index on auth_failure(minute, count) for the blocked-set query (issue 23, item 5).

Every process reads the addresses over the failure limit this minute once a second
(`WHERE minute = ? AND count >= ?`); without the index that read scanned every address that had ever
failed once. The rows themselves are now pruned by the retention task (tasks/maintenance.py).
"""


def up(migrator, db) -> None:
    """Add the index the model declares (AuthFailure.Meta.indexes), under peewee's name for it."""
    migrator.migrate(migrator.add_index("auth_failure", ("minute", "count"), False))

"""An index on usage_log(created_ms) for the daily prune of old usage rows.

The prune deletes by created_ms alone, and the only index led by api_key_id: without this one the
DELETE reads the whole usage log (one row per request) while it holds the write lock.
"""


def up(migrator, db) -> None:
    """Add the index the model declares (UsageLog.created_ms, index=True), under peewee's name for it."""
    migrator.migrate(migrator.add_index("usage_log", ("created_ms",), False))

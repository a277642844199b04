"""Placeholder for issue 14's migration 0006 (ops-health), so this branch's 0007 runs before it lands.

Delete this file when ops-health's 0006 is merged (the runner wants 1, 2, 3... without a gap).
"""


def up(migrator, db) -> None:
    """Nothing: the real 0006 lives on the ops-health branch."""

"""Two indexes that nothing reads, dropped: every emitted event paid for them (issue 17, speed).

- `event_type`: the app inserts events and prunes them by age (`event_created` stays for that);
  no query looks events up by type.
- `webhook_delivery_subscription_id`: its one column leads two other indexes of the table,
  `(subscription_id, event_id)` (unique) and `(subscription_id, created_at)`, which serve every
  query by subscription.

Each emitted event wrote a WAL page for each of them (17.5 pages for an event, its delivery and
its job before; about 15.5 after): docs/performance.md, issue 17.
"""

DROPPED = ("event_type", "webhook_delivery_subscription_id")


def up(migrator, db) -> None:
    """Drop the two indexes, where they exist (IF EXISTS: a database created without them)."""
    for index in DROPPED:
        db.execute_sql(f'DROP INDEX IF EXISTS "{index}"')

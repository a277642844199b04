"""Three indexes that nothing reads, dropped: every emitted event paid for them (issue 17, speed).

- `event_type` and `event_created`: the app only inserts events (their deliveries carry the
  envelope); no query looks events up by type or time.
- `webhook_delivery_subscription_id`: its one column leads two other indexes of the table,
  `(subscription_id, event_id)` (unique) and `(subscription_id, created_at)`, which serve every
  query by subscription.

Each emitted event wrote a page for each of them into the WAL (17 pages a event and delivery
before, 14 after): docs/performance.md, issue 17.
"""

DROPPED = (
    ("event", "event_type"),
    ("event", "event_created"),
    ("webhook_delivery", "webhook_delivery_subscription_id"),
)


def up(migrator, db) -> None:
    """Drop the three indexes, where they exist (IF EXISTS: a database created without them)."""
    for _table, index in DROPPED:
        db.execute_sql(f'DROP INDEX IF EXISTS "{index}"')

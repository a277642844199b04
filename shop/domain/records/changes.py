"""Helpers the record activities share."""

from shop import clock


def apply_changes(record, fields: dict) -> bool:
    """Set the fields whose value differs, stamp updated_at and save; whether anything changed."""
    changed = {name: value for name, value in fields.items() if getattr(record, name) != value}
    if not changed:
        return False
    for name, value in changed.items():
        setattr(record, name, value)
    record.updated_at = clock.now()
    record.save()
    return True


def str_id(value) -> str | None:
    """An id as events carry it: a string, or null."""
    return None if value is None else str(value)

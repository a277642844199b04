"""Helpers the record activities share: create, change and emit a record as its schema dumps it."""

from shop import clock
from shop.domain.activity import observed, refuse_taken_id
from shop.domain.events.outbox import emit


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


def emit_record(tenant_id: str, event_type: str, schema, record) -> dict:
    """Emit an in-app activity's event: the record as its schema dumps it, marked observed; the dump."""
    data = schema.dump(record)
    emit(tenant_id, event_type, observed(data))
    return data


def create_record(tenant_id: str, model, fields: dict, kind: str, schema, check=None):
    """Create a record (the id given is kept) and emit `<kind>.created`; the new record. `check` runs
    between the taken-id check and the insert."""
    refuse_taken_id(model, fields, kind)
    if check is not None:
        check()
    record = model.create(tenant=tenant_id, created_at=clock.now(), **fields)
    emit_record(tenant_id, f"{kind}.created", schema, record)
    return record


def save_changes(tenant_id: str, event_type: str, schema, record, fields: dict) -> dict:
    """Apply the fields; the event is emitted only when a value really changed; the record dumped."""
    if apply_changes(record, fields):
        return emit_record(tenant_id, event_type, schema, record)
    return schema.dump(record)

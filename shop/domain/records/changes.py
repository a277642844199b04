"""Helpers every record change shares: create, change and emit a record as its schema dumps it.

Who caused the change (an Actor) decides the event's marking: the API's events carry the record
exactly as its GET answers it; in-app activity's (staff, customers, `shop activity`) are marked
`source_kind: observed`. A caller that names no actor is in-app activity.
"""

from shop import clock
from shop.domain.activity import observed, refuse_taken_id
from shop.domain.actor import Actor
from shop.domain.events.outbox import emit


def event_data(data: dict, actor: Actor | None = None) -> dict:
    """A full-DTO event's data: the record as dumped; marked observed unless the API caused it."""
    return data if actor is not None and actor.api_driven else observed(data)


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


def emit_record(tenant_id: str, event_type: str, schema, record, actor: Actor | None = None) -> dict:
    """Emit the record as its schema dumps it (see event_data); the dump."""
    data = schema.dump(record)
    emit(tenant_id, event_type, event_data(data, actor))
    return data


def create_record(
    tenant_id: str, model, fields: dict, kind: str, schema, check=None, actor: Actor | None = None
):
    """Create a record (the id given is kept) and emit `<kind>.created`; the new record. `check` runs
    between the taken-id check and the insert."""
    refuse_taken_id(model, fields, kind)
    if check is not None:
        check()
    record = model.create(tenant=tenant_id, created_at=clock.now(), **fields)
    emit_record(tenant_id, f"{kind}.created", schema, record, actor)
    return record


def save_changes(
    tenant_id: str, event_type: str, schema, record, fields: dict, actor: Actor | None = None
) -> dict:
    """Apply the fields; the event is emitted only when a value really changed; the record dumped."""
    if apply_changes(record, fields):
        return emit_record(tenant_id, event_type, schema, record, actor)
    return schema.dump(record)

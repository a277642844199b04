"""Helpers every record change shares: create, change and emit a record as its schema dumps it.

Who caused the change (an Actor) decides the event's marking: the API's events carry the record
exactly as its GET answers it; in-app activity's (staff, customers, `shop activity`) are marked
`source_kind: observed`. A caller that names no actor is in-app activity.
"""

from schemas.common import INT32_MAX
from shop import clock
from shop.domain.activity import observed, refuse_taken_id, unprocessable
from shop.domain.actor import Actor
from shop.domain.events.outbox import emit
from shop.platform.errors import ApiError


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


def emit_as(actor: Actor, tenant_id: str, event_type: str, schema, record) -> dict:
    """Emit a full-DTO event as `actor` caused it: through the API the data is the GET answer itself,
    from in-app activity (or any other face) it is marked `source_kind: observed`; the dump."""
    data = schema.dump(record)
    emit(tenant_id, event_type, data if actor.api_driven else observed(data))
    return data


def priced_line_items(items: list[dict]) -> tuple[list[dict], int]:
    """Line items with their amounts computed (quantity x unit_amount), and their total; a client's
    amounts are never trusted. A total beyond a 32-bit amount is 400 invalid_field (line_items)."""
    priced = [
        {
            "description": item["description"],
            "quantity": item["quantity"],
            "unit_amount": item["unit_amount"],
            "amount": item["quantity"] * item["unit_amount"],
        }
        for item in items
    ]
    total = sum(item["amount"] for item in priced)
    if total > INT32_MAX:
        raise ApiError(
            400, "invalid_field", f"line_items: the total must be at most {INT32_MAX}.", "line_items"
        )
    return priced, total


def refuse_unless_draft(record, kind: str) -> None:
    """422 for an edit of a document that has left draft (sent, decided, paid or void)."""
    if record.status != "draft":
        raise unprocessable(f"{kind.capitalize()} {record.id} is {record.status}; only a draft is edited.")

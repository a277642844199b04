"""Records of two tenants for the catalog activity tests, and helpers to watch the store."""

import json

from peewee import SQL

from shop.db import on_postgres
from shop.models import ALL_MODELS, Event

ACME = dict(
    customers=[
        {"id": 1, "display_name": "Ann Lee", "email": "ann@example.com", "phone": "+15555550100"},
        {"id": 2, "display_name": "Bo Chen"},
    ],
    tickets=[
        {"id": "1001", "customer_id": 1, "subject": "Cracked screen", "status": "In Progress"},
        {"id": "1002", "customer_id": 2, "subject": "Battery"},
        {"id": "1003", "customer_id": 2, "subject": "Hidden", "hidden": True},
    ],
    invoices=[
        {"id": 3001, "ticket_id": "1001", "status": "sent", "total": 18900},
        {"id": 3002, "ticket_id": "1002", "total": 7900},
        {"id": 3003, "ticket_id": "1003", "total": 100},
    ],
    estimates=[
        {"id": 5001, "ticket_id": "1001", "status": "sent", "total": 18900},
        {"id": 5002, "ticket_id": "1002", "total": 7900},
        {"id": 5003, "ticket_id": "1003", "status": "sent"},
    ],
    payments=[
        {
            "id": 4001,
            "invoice_id": 3001,
            "amount": 5000,
            "method": "card",
            "created_at": "2026-11-01T12:00:00Z",
        },
        {
            "id": 4002,
            "invoice_id": 3001,
            "amount": 3000,
            "method": "cash",
            "created_at": "2026-11-01T13:00:00Z",
        },
    ],
    leads=[
        {
            "id": 6001,
            "name": "Cy Park",
            "email": "cy@example.com",
            "phone": "+15555550102",
            "source": "web_form",
        }
    ],
)
GLOBEX = dict(
    customers=[{"id": 21, "display_name": "Gil"}],
    tickets=[{"id": "2001", "customer_id": 21}],
    invoices=[{"id": 3901, "ticket_id": "2001", "total": 500}],
    estimates=[{"id": 5901, "ticket_id": "2001", "status": "sent"}],
    payments=[{"id": 4901, "invoice_id": 3901, "amount": 200}],
    leads=[{"id": 6901, "name": "Gia"}],
)


def activity(runner, kind: str, data: dict, tenant: str = "acme"):
    """Run the command; the printed record on success, else the failed result."""
    result = runner.invoke(args=["shop", "activity", kind, "--tenant", tenant, "--data", json.dumps(data)])
    return json.loads(result.output) if result.exit_code == 0 else result


def events() -> list[tuple[str, dict]]:
    """Every emitted event as (type, data), oldest first (in insertion order: the table is only
    appended to between two emptyings, so PostgreSQL's physical row order is that order too)."""
    insertion_order = SQL("ctid") if on_postgres() else SQL("rowid")
    return [(e.type, e.data) for e in Event.select().order_by(insertion_order)]


def snapshot() -> dict:
    """Every row of every table, to prove a refusal changed nothing."""
    return {model.__name__: sorted(map(repr, model.select().tuples())) for model in ALL_MODELS}

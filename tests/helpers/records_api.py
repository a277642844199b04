"""Two shops for the records' API tests (customers, tickets, leads), and what the tests ask of every route."""

from tests.helpers import auth_headers, logged_rows, tenant_fixture
from tests.helpers.records import events as all_events

TOKEN = "sk_test_acme_token_0001"
READ_ONLY = "sk_test_acme_read_0001"
GLOBEX = "sk_test_globex_token_0001"
READ_SCOPES = ["customers.read", "tickets.read", "leads.read"]


def records_shop() -> dict:
    """acme: two teammates, two customers, visible, hidden and deleted tickets, two leads; a second
    key that only reads."""
    tenant = tenant_fixture(
        "acme",
        users=[{"id": 7, "email": "sam@acme.test", "name": "Sam"}, {"id": 8, "email": "kim@acme.test"}],
        customers=[
            {"id": 1, "display_name": "Ann Lee", "email": "ann@example.com", "phone": "+15555550100"},
            {"id": 2, "display_name": "Bo Chen", "created_at": "2026-11-01T10:00:00Z"},
        ],
        tickets=[
            {"id": "1001", "customer_id": 1, "subject": "Cracked screen", "status": "In Progress"},
            {"id": "1002", "customer_id": 2, "subject": "Battery", "created_at": "2026-11-01T11:00:00Z"},
            {"id": "1003", "customer_id": 1, "subject": "Hidden one", "hidden": True},
            {"id": "1004", "customer_id": 1, "subject": "Deleted one", "deleted": True},
        ],
        leads=[
            {"id": 6001, "name": "Cy Park", "email": "cy@example.com", "phone": "+15555550102"},
            {
                "id": 6002,
                "name": "Di Ray",
                "status": "converted",
                "customer_id": 2,
                "converted_ticket_id": 1002,
            },
        ],
    )
    tenant["api_keys"].append({"id": "key_acme_read", "token": READ_ONLY, "scopes": READ_SCOPES})
    return tenant


def other_shop() -> dict:
    """globex: a customer, a ticket and a lead acme must never see."""
    return tenant_fixture(
        "globex",
        users=[{"id": 9, "email": "gil@globex.test"}],
        customers=[{"id": 21, "display_name": "Gil"}],
        tickets=[{"id": "2001", "customer_id": 21, "subject": "Globex ticket"}],
        leads=[{"id": 6901, "name": "Gia"}],
    )


def headers(token: str = TOKEN, **extra) -> dict:
    return {**auth_headers(token), **extra}


def events(kind: str | None = None) -> list[tuple[str, dict]]:
    """Emitted events (type, data) in emission order, of one type prefix when given."""
    return [item for item in all_events() if kind is None or item[0].startswith(kind)]


def logged(method: str, rule: str) -> list:
    """Usage-log rows of one route (its rule, as logged)."""
    return [row for row in logged_rows() if row.method == method and row.path == rule]


def snapshot() -> dict:
    """The shop's records and events, to prove a refusal wrote none (the usage log and the rate
    bucket do change: a refused request is still logged and counted)."""
    from shop.models import Customer, Event, Lead, Ticket

    return {
        model.__name__: sorted(map(repr, model.select().tuples()))
        for model in (Customer, Ticket, Lead, Event)
    }

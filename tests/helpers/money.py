"""What the estimate, invoice, payment and refund API tests share: two shops and their records."""

from shop.models import Estimate, Event, Invoice, Payment, Refund
from tests.helpers import auth_headers, tenant_fixture

ACME = auth_headers("sk_test_acme_token_0001")
GLOBEX = auth_headers("sk_test_globex_token_0001")
ITEMS = [
    {"description": "Screen replacement", "quantity": 1, "unit_amount": 12000},
    {"description": "Screen protector", "quantity": 2, "unit_amount": 1500},
]
TOTAL = 15000  # 12000 + 2 x 1500


def acme_fixture(estimates=(), invoices=(), payments=(), **fields) -> dict:
    """acme: two customers, tickets 1001 (Ann), 1002 (Bob), 1003 hidden, 1004 deleted; estimate 5009
    and invoice 3009 (paid 4009) on the hidden ticket; and the estimates, invoices and payments given."""
    return tenant_fixture(
        "acme",
        customers=[{"id": 1, "display_name": "Ann Lee"}, {"id": 2, "display_name": "Bob Roe"}],
        tickets=[
            {"id": "1001", "customer_id": 1, "subject": "Cracked screen"},
            {"id": "1002", "customer_id": 2, "subject": "Battery"},
            {"id": "1003", "customer_id": 1, "subject": "Hidden", "hidden": True},
            {"id": "1004", "customer_id": 1, "subject": "Deleted", "deleted": True},
        ],
        estimates=[{"id": 5009, "ticket_id": 1003, "status": "sent", "total": 500}, *estimates],
        invoices=[{"id": 3009, "ticket_id": 1003, "status": "sent", "total": 500}, *invoices],
        payments=[{"id": 4009, "invoice_id": 3009, "amount": 100}, *payments],
        **fields,
    )


def globex_fixture() -> dict:
    """globex: a ticket, an estimate, an invoice with a payment and a refund (ids acme never has)."""
    return tenant_fixture(
        "globex",
        customers=[{"id": 9, "display_name": "Gail"}],
        tickets=[{"id": "2001", "customer_id": 9}],
        estimates=[{"id": 5900, "ticket_id": 2001, "status": "sent", "total": 500}],
        invoices=[{"id": 3900, "ticket_id": 2001, "status": "sent", "total": 500}],
        payments=[{"id": 4900, "invoice_id": 3900, "amount": 200}],
        refunds=[{"id": 6900, "payment_id": 4900, "amount": 50}],
    )


def events(type_: str | None = None) -> list[dict]:
    """Event data in emission order, optionally of one type."""
    query = Event.select().order_by(Event.created, Event.id)
    return [e.data for e in query if type_ is None or e.type == type_]


def event_types() -> list[str]:
    return [e.type for e in Event.select().order_by(Event.created, Event.id)]


def snapshot() -> tuple:
    """Every money row and the number of events: what a rejected write must not change."""
    rows = tuple(
        [tuple(row) for row in model.select().order_by(model.id).tuples()]
        for model in (Estimate, Invoice, Payment, Refund)
    )
    return rows, Event.select().count()


def post(client, path: str, body=None, headers=ACME, status: int = 201) -> dict:
    """POST and check the status; the JSON answer."""
    response = client.post(path, json=body, headers=headers)
    assert response.status_code == status, response.get_data(as_text=True)
    return response.get_json()

"""Customers as the public list shows them."""

from shop import clock
from shop.models import Customer
from shop.platform.pagination import paginate

ORDER = [(Customer.created_at, True), (Customer.id, True)]


def customer_dto(customer: Customer) -> dict:
    """A customer list item: object, id (string), display_name, email, created_at."""
    return {
        "object": "customer",
        "id": str(customer.id),
        "display_name": customer.display_name,
        "email": customer.email,
        "created_at": clock.isoformat(customer.created_at),
    }


def list_customers(tenant_id: str, limit: int, cursor: str | None) -> dict:
    """One page of the tenant's customers, newest first."""
    page = paginate(Customer.for_tenant(tenant_id), ORDER, limit, cursor)
    return page.envelope(customer_dto)

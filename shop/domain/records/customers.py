"""Customers as the public list shows them, and their in-app activities."""

from schemas.customers import CustomerRecordSchema
from shop.domain.records.changes import create_record, save_changes
from shop.models import Customer
from shop.platform.errors import not_found
from shop.platform.pagination import paginate

ORDER = [(Customer.created_at, True), (Customer.id, True)]
# the customer.* event data (the list item plus phone, consent and updated_at)
CUSTOMER = CustomerRecordSchema()


def list_customers(tenant_id: str, limit: int, cursor: str | None) -> dict:
    """One page of the tenant's customers, newest first."""
    page = paginate(Customer.for_tenant(tenant_id), ORDER, limit, cursor)
    return page.envelope()


def get_customer_or_404(tenant_id: str, customer_id: int, param: str = "id") -> Customer:
    """The tenant's customer, or 404 (another tenant's customer is not found either)."""
    found = Customer.for_tenant(tenant_id).where(Customer.id == customer_id).first()
    if found is None:
        raise not_found("customer", customer_id, param)
    return found


def new_customer(tenant_id: str, fields: dict) -> Customer:
    """Create a customer (the id given is kept) and emit customer.created."""
    return create_record(tenant_id, Customer, fields, "customer", CUSTOMER)


def create_customer(tenant_id: str, fields: dict) -> dict:
    """In-app activity: a customer is created at the counter or online."""
    return CUSTOMER.dump(new_customer(tenant_id, fields))


def update_customer(tenant_id: str, fields: dict) -> dict:
    """In-app activity: customer fields edited; customer.updated only when a value really changed."""
    customer = get_customer_or_404(tenant_id, fields.pop("id"))
    return save_changes(tenant_id, "customer.updated", CUSTOMER, customer, fields)

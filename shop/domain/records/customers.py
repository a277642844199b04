"""Customers: the list, one customer, and the changes every face makes through the same functions."""

from schemas.customers import CustomerRecordSchema
from shop.db import locked, write_transaction
from shop.domain.actor import Actor
from shop.domain.records.changes import create_record, save_changes
from shop.models import Customer
from shop.platform.errors import not_found
from shop.platform.pagination import paginate

ORDER = [(Customer.created_at, True), (Customer.id, True)]
# GET /customers/<id> and the customer.* event data (the list item plus phone, consent and updated_at)
CUSTOMER = CustomerRecordSchema()


def list_customers(tenant_id: str, limit: int, cursor: str | None) -> dict:
    """One page of the tenant's customers, newest first."""
    page = paginate(Customer.for_tenant(tenant_id), ORDER, limit, cursor)
    return page.envelope()


def get_customer_or_404(tenant_id: str, customer_id: int, param: str = "id", lock: bool = False) -> Customer:
    """The tenant's customer, or 404 (another tenant's customer is not found either)."""
    query = Customer.for_tenant(tenant_id).where(Customer.id == customer_id)
    found = (locked(query, "NO KEY UPDATE") if lock else query).first()
    if found is None:
        raise not_found("customer", customer_id, param)
    return found


def get_customer(tenant_id: str, customer_id: int) -> dict:
    """GET /customers/<id>: the customer as its events carry it."""
    return CUSTOMER.dump(get_customer_or_404(tenant_id, customer_id))


def new_customer(tenant_id: str, fields: dict, actor: Actor | None = None) -> Customer:
    """Create a customer (the id given is kept) and emit customer.created."""
    return create_record(tenant_id, Customer, fields, "customer", CUSTOMER, actor=actor)


def create_customer(tenant_id: str, fields: dict, actor: Actor) -> dict:
    """A customer is created (API, or in-app at the counter or online); customer.created."""
    with write_transaction():
        return CUSTOMER.dump(new_customer(tenant_id, fields, actor))


def update_customer(tenant_id: str, fields: dict, actor: Actor) -> dict:
    """Customer fields edited (`fields["id"]` names it); customer.updated only when a value really changed."""
    with write_transaction():
        customer = get_customer_or_404(tenant_id, fields.pop("id"), lock=True)
        return save_changes(tenant_id, "customer.updated", CUSTOMER, customer, fields, actor)

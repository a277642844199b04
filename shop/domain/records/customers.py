"""Customers as the public list shows them."""

from schemas.activity import CustomerCreated, CustomerUpdated
from shop import clock
from shop.domain.activity import not_found, observed, parse_data, refuse_taken_id
from shop.domain.events.outbox import emit
from shop.domain.records.changes import apply_changes
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


def customer_record(customer: Customer) -> dict:
    """The customer as customer.* events carry it: the list item plus phone, consent and updated_at."""
    return {
        **customer_dto(customer),
        "phone": customer.phone,
        "sms_consent": customer.sms_consent,
        "updated_at": clock.isoformat(customer.updated_at),
    }


def get_customer_or_404(tenant_id: str, customer_id: int, param: str = "id") -> Customer:
    """The tenant's customer, or 404 (another tenant's customer is not found either)."""
    found = Customer.for_tenant(tenant_id).where(Customer.id == customer_id).first()
    if found is None:
        raise not_found("customer", customer_id, param)
    return found


def new_customer(tenant_id: str, fields: dict) -> Customer:
    """Create a customer (the id given is kept) and emit customer.created."""
    refuse_taken_id(Customer, fields, "customer")
    customer = Customer.create(tenant=tenant_id, created_at=clock.now(), **fields)
    emit(tenant_id, "customer.created", observed(customer_record(customer)))
    return customer


def create_customer(tenant_id: str, data: dict) -> dict:
    """In-app activity: a customer is created at the counter or online."""
    return customer_record(new_customer(tenant_id, parse_data(CustomerCreated, data)))


def update_customer(tenant_id: str, data: dict) -> dict:
    """In-app activity: customer fields edited; customer.updated only when a value really changed."""
    fields = parse_data(CustomerUpdated, data)
    customer = get_customer_or_404(tenant_id, fields.pop("id"))
    if apply_changes(customer, fields):
        emit(tenant_id, "customer.updated", observed(customer_record(customer)))
    return customer_record(customer)

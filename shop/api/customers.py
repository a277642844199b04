"""GET /api/v1/customers: the tenant's customers, newest first."""

from flask import g

from schemas.customers import CustomerListSchema, CustomerQueryArgsSchema
from shop.domain.records.customers import list_customers
from shop.platform.smorest import Blueprint

blp = Blueprint("customers", __name__, description="Customers")


@blp.route("/customers")
@blp.arguments(CustomerQueryArgsSchema, location="query")
@blp.response(200, CustomerListSchema)
@blp.scope("customers.read")
@blp.doc(operationId="listCustomers")
def customers(args):
    """List customers, newest first."""
    return list_customers(g.tenant.id, args["limit"], args["cursor"])

"""The customer endpoints: list, create, retrieve, update."""

from flask import g
from flask.views import MethodView

from schemas.customers import (
    CustomerCreateSchema,
    CustomerListSchema,
    CustomerQueryArgsSchema,
    CustomerRecordSchema,
    CustomerUpdateSchema,
)
from shop.domain import actor
from shop.domain.records import customers as domain
from shop.platform.smorest import Blueprint

blp = Blueprint("customers", __name__, description="Customers: the shop's clients")


@blp.route("/customers")
class CustomerViews(MethodView):
    @blp.arguments(CustomerQueryArgsSchema, location="query")
    @blp.response(200, CustomerListSchema)
    @blp.scope("customers.read")
    @blp.doc(operationId="listCustomers")
    def get(self, args):
        """List customers, newest first."""
        return domain.list_customers(g.tenant.id, args["limit"], args["cursor"])

    @blp.arguments(CustomerCreateSchema)
    @blp.response(201, CustomerRecordSchema)
    @blp.scope("customers.write")
    @blp.doc(operationId="createCustomer")
    def post(self, body):
        """Create a customer (customer.created)."""
        return domain.create_customer(g.tenant.id, body, actor.api_key(g.api_key.id))


@blp.route("/customers/<id>")
class CustomerByIdViews(MethodView):
    @blp.path_id()
    @blp.response(200, CustomerRecordSchema)
    @blp.scope("customers.read")
    @blp.doc(operationId="getCustomer")
    def get(self, id):
        """Retrieve a customer."""
        return domain.get_customer(g.tenant.id, id)

    @blp.path_id()
    @blp.arguments(CustomerUpdateSchema, required=False)
    @blp.response(200, CustomerRecordSchema)
    @blp.scope("customers.write")
    @blp.doc(operationId="updateCustomer")
    def patch(self, changes, id):
        """Change a customer's fields (customer.updated when a value really changes)."""
        return domain.update_customer(g.tenant.id, {**changes, "id": id}, actor.api_key(g.api_key.id))

"""The lead endpoints: list, create, retrieve, update, convert to a repair ticket."""

from flask import g
from flask.views import MethodView

from schemas.records import (
    LeadConvertSchema,
    LeadCreateSchema,
    LeadListSchema,
    LeadQueryArgsSchema,
    LeadSchema,
    LeadUpdateSchema,
)
from shop.domain import actor
from shop.domain.records import leads as domain
from shop.platform.smorest import Blueprint

blp = Blueprint("leads", __name__, description="Leads: prospective customers, until converted")


@blp.route("/leads")
class LeadViews(MethodView):
    @blp.arguments(LeadQueryArgsSchema, location="query")
    @blp.response(200, LeadListSchema)
    @blp.scope("leads.read")
    @blp.doc(operationId="listLeads")
    def get(self, args):
        """List leads, newest first."""
        return domain.list_leads(g.tenant.id, args)

    @blp.arguments(LeadCreateSchema)
    @blp.response(201, LeadSchema)
    @blp.scope("leads.write")
    @blp.doc(operationId="createLead")
    def post(self, body):
        """Capture a lead (lead.created)."""
        return domain.create_lead(g.tenant.id, body, actor.api_key(g.api_key.id))


@blp.route("/leads/<id>")
class LeadByIdViews(MethodView):
    @blp.path_id()
    @blp.response(200, LeadSchema)
    @blp.scope("leads.read")
    @blp.doc(operationId="getLead")
    def get(self, id):
        """Retrieve a lead."""
        return domain.get_lead(g.tenant.id, id)

    @blp.path_id()
    @blp.arguments(LeadUpdateSchema, required=False)
    @blp.response(200, LeadSchema)
    @blp.refuses(422, "unprocessable: the lead is converted")
    @blp.scope("leads.write")
    @blp.doc(operationId="updateLead")
    def patch(self, changes, id):
        """Change a lead's fields or pipeline status (lead.updated when a value really changes)."""
        return domain.update_lead(g.tenant.id, {**changes, "id": id}, actor.api_key(g.api_key.id))


@blp.route("/leads/<id>/convert", methods=["POST"])
@blp.path_id()
@blp.arguments(LeadConvertSchema, required=False)
@blp.response(200, LeadSchema)
@blp.refuses(
    404,
    "not_found: no such lead (param id), or the customer_id or ticket_id names no customer or "
    "visible ticket of the shop (param customer_id or ticket_id)",
)
@blp.refuses(422, "unprocessable: the lead is already converted")
@blp.scope("leads.write")
@blp.doc(operationId="convertLead")
def convert(body, id):
    """Convert a lead to a repair ticket: a new customer and ticket unless named (lead.converted,
    customer.created, ticket.created, in one transaction)."""
    return domain.convert_lead(g.tenant.id, {**body, "id": id}, actor.api_key(g.api_key.id))

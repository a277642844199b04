"""The ticket endpoints: list (by status and customer), create, retrieve, update and move the status."""

from flask import g
from flask.views import MethodView

from schemas.records import (
    TicketCreateSchema,
    TicketListSchema,
    TicketQueryArgsSchema,
    TicketSchema,
    TicketUpdateSchema,
)
from shop.domain import actor
from shop.domain.records import tickets as domain
from shop.platform.smorest import Blueprint

blp = Blueprint("tickets", __name__, description="Repair tickets (hidden and deleted ones are not found)")

REFUSED_FIELDS = (
    "invalid_field: status not one of the shop's ticket_statuses (param status), or assigned_user_id "
    "no teammate of the shop; missing_field, invalid_value and the other input codes"
)
CUSTOMER_NOT_FOUND = "not_found: the customer_id names no customer of the shop (param customer_id)"


@blp.route("/tickets")
class TicketViews(MethodView):
    @blp.arguments(TicketQueryArgsSchema, location="query")
    @blp.response(200, TicketListSchema)
    @blp.scope("tickets.read")
    @blp.doc(operationId="listTickets")
    def get(self, args):
        """List visible tickets, newest first."""
        return domain.list_tickets(g.tenant.id, args)

    @blp.arguments(TicketCreateSchema)
    @blp.response(201, TicketSchema)
    @blp.refuses(400, REFUSED_FIELDS)
    @blp.refuses(404, CUSTOMER_NOT_FOUND)
    @blp.scope("tickets.write")
    @blp.doc(operationId="createTicket")
    def post(self, body):
        """Open a ticket, in the shop's first status unless one is given (ticket.created)."""
        return domain.create_ticket(g.tenant.id, body, actor.api_key(g.api_key.id))


@blp.route("/tickets/<id>")
class TicketByIdViews(MethodView):
    @blp.path_id()
    @blp.response(200, TicketSchema)
    @blp.scope("tickets.read")
    @blp.doc(operationId="getTicket")
    def get(self, id):
        """Retrieve a ticket."""
        return domain.get_ticket(g.tenant.id, id)

    @blp.path_id()
    @blp.arguments(TicketUpdateSchema, required=False)
    @blp.response(200, TicketSchema)
    @blp.refuses(400, REFUSED_FIELDS)
    @blp.refuses(404, f"not_found: no such visible ticket (param id); or {CUSTOMER_NOT_FOUND}")
    @blp.scope("tickets.write")
    @blp.doc(operationId="updateTicket")
    def patch(self, changes, id):
        """Change fields or the status: ticket.status_changed for a real transition, ticket.updated
        when another field really changes."""
        return domain.update_ticket(g.tenant.id, {**changes, "id": id}, actor.api_key(g.api_key.id))

"""The invoice endpoints: list, create, retrieve, update while draft, send, void."""

from flask import current_app, g
from flask.views import MethodView

from schemas.common import NoBodySchema
from schemas.invoices import (
    InvoiceCreateSchema,
    InvoiceListSchema,
    InvoiceQueryArgsSchema,
    InvoiceUpdateSchema,
    InvoiceVoidSchema,
)
from schemas.records import InvoiceSchema
from shop.domain import actor
from shop.domain.messaging import sending
from shop.domain.records import invoices as domain
from shop.domain.records import portal
from shop.platform.public_url import public_root
from shop.platform.smorest import Blueprint

blp = Blueprint("invoices", __name__, description="Invoices: line items, amounts paid, refunded and due")

NOT_FOUND = "not_found: no such invoice (param id), or it belongs to a hidden or deleted ticket"


def key() -> actor.Actor:
    return actor.api_key(g.api_key.id)


@blp.route("/invoices")
class InvoiceViews(MethodView):
    @blp.arguments(InvoiceQueryArgsSchema, location="query")
    @blp.response(200, InvoiceListSchema)
    @blp.scope("invoices.read")
    @blp.doc(operationId="listInvoices")
    def get(self, args):
        """List invoices, newest first."""
        return domain.list_invoices(g.tenant.id, args)

    @blp.arguments(InvoiceCreateSchema)
    @blp.response(201, InvoiceSchema)
    @blp.refuses(
        404,
        "not_found: the ticket_id names no visible ticket (param ticket_id), or the customer_id "
        "no customer (param customer_id)",
    )
    @blp.scope("invoices.write")
    @blp.doc(operationId="createInvoice")
    def post(self, body):
        """Draft an invoice (invoice.created); its total is computed from the line items."""
        return domain.draft_invoice(g.tenant.id, key(), body)


@blp.route("/invoices/<id>")
class InvoiceByIdViews(MethodView):
    @blp.path_id()
    @blp.response(200, InvoiceSchema)
    @blp.scope("invoices.read")
    @blp.doc(operationId="getInvoice")
    def get(self, id):
        """Retrieve an invoice with its amounts paid, refunded and due."""
        return domain.retrieve_invoice(g.tenant.id, id)

    @blp.path_id()
    @blp.arguments(InvoiceUpdateSchema)
    @blp.response(200, InvoiceSchema)
    @blp.refuses(404, NOT_FOUND)
    @blp.refuses(422, "unprocessable: the invoice is no longer a draft, or has payments")
    @blp.scope("invoices.write")
    @blp.doc(operationId="updateInvoice")
    def patch(self, changes, id):
        """Change a draft invoice's line items or currency."""
        return domain.revise_invoice(g.tenant.id, key(), id, changes)


@blp.route("/invoices/<id>/send", methods=["POST"])
@blp.path_id()
@blp.arguments(NoBodySchema)
@blp.response(200, InvoiceSchema)
@blp.refuses(404, NOT_FOUND)
@blp.refuses(422, "unprocessable: the invoice is paid or void")
@blp.scope("invoices.write")
@blp.doc(operationId="sendInvoice")
def send(body, id):
    """Send an invoice to the customer (again, if already sent): invoice.sent."""
    sender = sending.sender_for("email", current_app.config)
    return portal.send_invoice(g.tenant, key(), id, public_root(), sender).document


@blp.route("/invoices/<id>/void", methods=["POST"])
@blp.path_id()
@blp.arguments(InvoiceVoidSchema)
@blp.response(200, InvoiceSchema)
@blp.refuses(404, NOT_FOUND)
@blp.refuses(422, "unprocessable: the invoice is paid, void, or has payments (refund them instead)")
@blp.scope("invoices.write")
@blp.doc(operationId="voidInvoice")
def void(body, id):
    """Void an unpaid invoice: invoice.voided."""
    return domain.void_invoice_by_id(g.tenant.id, key(), id, body["reason"])

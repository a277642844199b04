"""The payment endpoints: record a payment against an invoice, list, retrieve."""

from flask import g
from flask.views import MethodView

from schemas.payments import PaymentCreateSchema, PaymentListSchema, PaymentQueryArgsSchema
from schemas.records import PaymentSchema
from shop.domain import actor
from shop.domain.records import invoices as domain
from shop.platform.smorest import Blueprint

blp = Blueprint("payments", __name__, description="Payments recorded against invoices (no card data)")


@blp.route("/payments")
class PaymentViews(MethodView):
    @blp.arguments(PaymentQueryArgsSchema, location="query")
    @blp.response(200, PaymentListSchema)
    @blp.scope("payments.read")
    @blp.doc(operationId="listPayments")
    def get(self, args):
        """List payments, newest first."""
        return domain.list_payments(g.tenant.id, args)

    @blp.arguments(PaymentCreateSchema)
    @blp.response(201, PaymentSchema)
    @blp.refuses(404, "not_found: the invoice_id names no invoice, or one of a hidden or deleted ticket")
    @blp.refuses(
        422, "unprocessable: the amount exceeds what is due (param amount), or the invoice is paid or void"
    )
    @blp.scope("payments.write")
    @blp.doc(operationId="createPayment")
    def post(self, body):
        """Record a payment: payment.recorded, and invoice.paid when it pays the invoice in full."""
        invoice_id = body.pop("invoice_id")
        return domain.take_payment(g.tenant.id, actor.api_key(g.api_key.id), invoice_id, body)


@blp.route("/payments/<id>")
@blp.path_id()
@blp.response(200, PaymentSchema)
@blp.scope("payments.read")
@blp.doc(operationId="getPayment")
def payment(id):
    """Retrieve a payment with what has been refunded of it."""
    return domain.retrieve_payment(g.tenant.id, id)

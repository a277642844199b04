"""The refund endpoints: refund a payment, list, retrieve."""

from flask import g
from flask.views import MethodView

from schemas.payments import RefundCreateSchema, RefundListSchema, RefundQueryArgsSchema
from schemas.records import RefundSchema
from shop.domain import actor
from shop.domain.records import invoices as domain
from shop.platform.smorest import Blueprint

blp = Blueprint("refunds", __name__, description="Refunds of payments")


@blp.route("/refunds")
class RefundViews(MethodView):
    @blp.arguments(RefundQueryArgsSchema, location="query")
    @blp.response(200, RefundListSchema)
    @blp.scope("payments.read")
    @blp.doc(operationId="listRefunds")
    def get(self, args):
        """List refunds, newest first."""
        return domain.list_refunds(g.tenant.id, args)

    @blp.arguments(RefundCreateSchema)
    @blp.response(201, RefundSchema)
    @blp.refuses(404, "not_found: the payment_id names no payment, or one of a hidden or deleted ticket")
    @blp.refuses(422, "unprocessable: the amount exceeds what is left of the payment (param amount)")
    @blp.scope("payments.write")
    @blp.doc(operationId="createRefund")
    def post(self, body):
        """Refund a payment, all that is left of it or part: payment.refunded and invoice.refunded."""
        return domain.refund_payment_by_id(
            g.tenant.id, actor.api_key(g.api_key.id), body["payment_id"], body.get("amount"), body["reason"]
        )


@blp.route("/refunds/<id>")
@blp.path_id()
@blp.response(200, RefundSchema)
@blp.scope("payments.read")
@blp.doc(operationId="getRefund")
def refund(id):
    """Retrieve a refund."""
    return domain.get_refund_or_404(g.tenant.id, id)

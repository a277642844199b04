"""The estimate endpoints: list, create, retrieve, update while draft, send, approve, decline."""

from flask import current_app, g
from flask.views import MethodView

from schemas.common import NoBodySchema
from schemas.estimates import (
    EstimateCreateSchema,
    EstimateDeclineSchema,
    EstimateListSchema,
    EstimateQueryArgsSchema,
    EstimateUpdateSchema,
)
from schemas.records import EstimateSchema
from shop.domain import actor
from shop.domain.messaging import sending
from shop.domain.records import estimates as domain
from shop.domain.records import portal
from shop.platform.public_url import public_root
from shop.platform.smorest import Blueprint

blp = Blueprint("estimates", __name__, description="Estimates of a ticket, sent to the customer and decided")

NOT_FOUND = "not_found: no such estimate (param id), or it belongs to a hidden or deleted ticket"
DECIDED = "unprocessable: the estimate is not sent (a draft, or already approved or declined)"


def key() -> actor.Actor:
    return actor.api_key(g.api_key.id)


@blp.route("/estimates")
class EstimateViews(MethodView):
    @blp.arguments(EstimateQueryArgsSchema, location="query")
    @blp.response(200, EstimateListSchema)
    @blp.scope("estimates.read")
    @blp.doc(operationId="listEstimates")
    def get(self, args):
        """List estimates, newest first."""
        return domain.list_estimates(g.tenant.id, args)

    @blp.arguments(EstimateCreateSchema)
    @blp.response(201, EstimateSchema)
    @blp.refuses(404, "not_found: the ticket_id names no visible ticket (param ticket_id)")
    @blp.scope("estimates.write")
    @blp.doc(operationId="createEstimate")
    def post(self, body):
        """Draft an estimate for a ticket; its total is computed from the line items."""
        return domain.draft_estimate(g.tenant.id, key(), body)


@blp.route("/estimates/<id>")
class EstimateByIdViews(MethodView):
    @blp.path_id()
    @blp.response(200, EstimateSchema)
    @blp.scope("estimates.read")
    @blp.doc(operationId="getEstimate")
    def get(self, id):
        """Retrieve an estimate."""
        return domain.retrieve_estimate(g.tenant.id, id)

    @blp.path_id()
    @blp.arguments(EstimateUpdateSchema)
    @blp.response(200, EstimateSchema)
    @blp.refuses(404, NOT_FOUND)
    @blp.refuses(422, "unprocessable: the estimate is no longer a draft")
    @blp.scope("estimates.write")
    @blp.doc(operationId="updateEstimate")
    def patch(self, changes, id):
        """Change a draft estimate's line items or currency."""
        return domain.revise_estimate(g.tenant.id, key(), id, changes)


@blp.route("/estimates/<id>/send", methods=["POST"])
@blp.path_id()
@blp.arguments(NoBodySchema)
@blp.response(200, EstimateSchema)
@blp.refuses(404, NOT_FOUND)
@blp.refuses(422, "unprocessable: the estimate is already approved or declined")
@blp.scope("estimates.write")
@blp.doc(operationId="sendEstimate")
def send(body, id):
    """Send an estimate to the customer (again, if already sent): estimate.sent."""
    sender = sending.sender_for("email", current_app.config)
    return portal.send_estimate(g.tenant, key(), id, public_root(), sender).document


@blp.route("/estimates/<id>/approve", methods=["POST"])
@blp.path_id()
@blp.arguments(NoBodySchema)
@blp.response(200, EstimateSchema)
@blp.refuses(404, NOT_FOUND)
@blp.refuses(422, DECIDED)
@blp.scope("estimates.write")
@blp.doc(operationId="approveEstimate")
def approve(body, id):
    """Record the customer's approval of a sent estimate: estimate.approved, approved_by the key."""
    return domain.decide_estimate_by_id(g.tenant.id, key(), id, "approved")


@blp.route("/estimates/<id>/decline", methods=["POST"])
@blp.path_id()
@blp.arguments(EstimateDeclineSchema)
@blp.response(200, EstimateSchema)
@blp.refuses(404, NOT_FOUND)
@blp.refuses(422, DECIDED)
@blp.scope("estimates.write")
@blp.doc(operationId="declineEstimate")
def decline(body, id):
    """Record the customer's decline of a sent estimate: estimate.declined, declined_by the key."""
    return domain.decide_estimate_by_id(g.tenant.id, key(), id, "declined", body["reason"])

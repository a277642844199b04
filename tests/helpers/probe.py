"""A probe resource mounted only in tests: a POST that writes a row, to exercise the platform.

The platform issue has no write endpoint of its own; this route stands in for "any POST" so the
pipeline (415/413, bad JSON, validation mapping, idempotency, usage logging) is tested through the
real Flask app, real parser and real database.
"""

import time

import marshmallow as ma
from flask import g
from flask.views import MethodView

from schemas.common import Int32, Schema
from schemas.customers import CustomerSchema
from shop.db import write_transaction
from shop.models import Customer
from shop.platform.smorest import Blueprint

blp = Blueprint("probe", __name__, description="test-only probe")


class ProbeCreateSchema(Schema):
    display_name = ma.fields.String(required=True, validate=ma.validate.Length(max=20))
    email = ma.fields.Email(allow_none=True)
    count = Int32()
    delay_ms = ma.fields.Integer(strict=True, validate=ma.validate.Range(min=0, max=5000))
    fail = ma.fields.String(validate=ma.validate.OneOf(("crash", "conflict")))


@blp.route("/_probe")
class ProbeViews(MethodView):
    @blp.arguments(ProbeCreateSchema)
    @blp.response(201)
    @blp.lenient_query  # "any POST", whatever its query string: the platform tests vary the URL by it
    @blp.scope("customers.read")
    def post(self, body):
        """Create a customer row (optionally slowly, or failing)."""
        from shop.platform.errors import ApiError

        with write_transaction():
            customer = Customer.create(
                tenant=g.tenant.id, display_name=body["display_name"], email=body.get("email")
            )
            time.sleep(body.get("delay_ms", 0) / 1000)
            if body.get("fail") == "crash":
                raise RuntimeError("probe crash with secret sk_live_should_not_leak")
            if body.get("fail") == "conflict":
                raise ApiError(409, "conflict", "probe conflict")
        return CustomerSchema().dump(customer)

    @blp.response(200)
    @blp.scope("customers.read")
    def delete(self):
        """A write with no body."""
        return {"deleted": True}


def register_probe(app) -> None:
    app.extensions["shop.api"].register_blueprint(blp, url_prefix="/api/v1")

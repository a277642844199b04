"""The app under gunicorn for the tests that kill a worker in the middle of a request.

`SHOP_TEST_KILL_FILE` names a file; when it holds the name of a point, the worker that reaches
that point removes the file (so the retry is not killed too) and SIGKILLs itself there:

- `before_commit`: POST /api/v1/_probe_kill has written its customer, its transaction still open;
- `after_commit`: the request's transaction (the key's claim, the customer, the saved response)
  has committed, and the answer has not left;
- `after_response`: the answer was sent.
"""

import os
import signal

import marshmallow as ma
from flask import g
from flask.views import MethodView

from schemas.common import Schema
from schemas.customers import CustomerSchema
from shop import create_app
from shop.db import write_transaction
from shop.models import Customer
from shop.platform.smorest import Blueprint
from tests.helpers.probe import register_probe

KILL_FILE = os.environ["SHOP_TEST_KILL_FILE"]
blp = Blueprint("kill_probe", __name__, description="test-only: a write whose worker may die")


def kill_if(point: str) -> None:
    try:
        with open(KILL_FILE) as handle:
            wanted = handle.read().strip()
    except FileNotFoundError:
        return
    if wanted == point:
        os.unlink(KILL_FILE)
        os.kill(os.getpid(), signal.SIGKILL)


class KillProbeSchema(Schema):
    display_name = ma.fields.String(required=True)


@blp.route("/_probe_kill")
class KillProbe(MethodView):
    @blp.arguments(KillProbeSchema)
    @blp.response(201)
    @blp.scope("customers.read")
    def post(self, body):
        """Create a customer; the worker may die before the transaction commits."""
        with write_transaction():
            customer = Customer.create(tenant=g.tenant.id, display_name=body["display_name"])
            kill_if("before_commit")
        return CustomerSchema().dump(customer)


def _after(response):
    kill_if("after_commit")
    response.call_on_close(lambda: kill_if("after_response"))
    return response


app = create_app()
register_probe(app)
app.extensions["shop.api"].register_blueprint(blp, url_prefix="/api/v1")
app.after_request(_after)

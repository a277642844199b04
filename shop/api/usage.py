"""GET /api/v1/usage: request volume, errors and latency of the calling key."""

from flask import current_app, g, request

from schemas.usage import ApiUsageSchema, UsageQueryDocSchema
from shop.domain.usage import report, resolve_query
from shop.platform.smorest import Blueprint

blp = Blueprint("usage", __name__, description="Usage of the calling key")


@blp.route("/usage")
# in the arguments' place: the query is parsed leniently by the domain, so only documented here
@blp.doc(parameters=[{"in": "query", "schema": UsageQueryDocSchema}])
@blp.response(200, ApiUsageSchema)
@blp.refuses(504, "api_usage_timeout: the rollup exceeded its time budget; retry with a shorter window")
@blp.ungated
@blp.lenient_query
@blp.scope(None)
@blp.doc(operationId="getUsage")
def usage():
    """Usage of the calling key over a window (malformed parameters fall back to defaults)."""
    query = resolve_query(request.args)
    return report(g.api_key, query, budget_ms=float(current_app.config["USAGE_TIME_BUDGET_MS"]))

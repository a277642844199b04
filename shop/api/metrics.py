"""GET /metrics: Prometheus text for the operator, behind its own token (SHOP_METRICS_TOKEN)."""

from flask import current_app
from werkzeug.exceptions import NotFound

from shop.platform import auth, metrics
from shop.platform.errors import ApiError
from shop.platform.smorest import Blueprint

blp = Blueprint("metrics", __name__, description="Prometheus metrics for the operator")

TEXT = "text/plain; version=0.0.4; charset=utf-8"
CHALLENGE = 'Bearer realm="metrics"'
SCHEME = {
    "type": "http",
    "scheme": "bearer",
    "description": "The operator's SHOP_METRICS_TOKEN (not an API key); /metrics is off without one.",
}
RESPONSES = {
    "200": {
        "description": "The Prometheus text exposition (format 0.0.4) of every process on this box.",
        "content": {"text/plain": {"schema": {"type": "string"}}},
    },
    "401": {"description": "unauthorized: the metrics token is missing or wrong."},
    "429": {
        "description": "rate_limited: too many failed authentications from this address this minute "
        "(API keys and the metrics token count together)."
    },
    "404": {
        "description": "not_found: metrics are off (SHOP_METRICS_TOKEN unset), as for an unknown route, "
        "with or without a token: the token is required only while metrics are on."
    },
}


def own_token(func):
    """Skip API-key authentication: the view checks the metrics token itself."""
    func._public = True
    return func


@blp.route("/metrics")
@own_token
# the empty requirement: while metrics are off the route answers 404 whatever the credentials,
# so a client without the token is not refused 401 then (issue 23, item 10)
@blp.doc(security=[{"metricsToken": []}, {}], responses=RESPONSES)
@blp.doc(operationId="getMetrics")
def metrics_text():
    """Prometheus metrics: requests, deliveries, sends, rejections, the backlog (off unless configured)."""
    config = current_app.config
    if not config.get("METRICS_TOKEN"):
        raise NotFound()
    # a wrong token is a failed authentication like a bad API key's: counted against the address,
    # which is refused once over the limit (else the token could be guessed without end)
    auth.refuse_blocked_address()
    if not metrics.authorized(config):
        auth.record_failure()
        raise ApiError(
            401, "unauthorized", "Missing or wrong metrics token.", headers={"WWW-Authenticate": CHALLENGE}
        )
    return current_app.response_class(metrics.exposition(config), content_type=TEXT)


def register(api) -> None:
    """Serve /metrics at the root (not under /api/v1) and document its token scheme."""
    api.spec.components.security_scheme("metricsToken", SCHEME)
    api.register_blueprint(blp)

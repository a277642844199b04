"""GET /api/v1/me: the calling key's identity."""

from flask import g

from schemas.identity import ApiKeyIdentitySchema
from shop.domain.keys import identity
from shop.platform.smorest import Blueprint

blp = Blueprint("identity", __name__, description="The calling API key")


@blp.route("/me")
@blp.response(200, ApiKeyIdentitySchema)
@blp.scope(None)
@blp.doc(operationId="getApiKeyIdentity")
def me():
    """The calling key: id, tenant, mode and scopes."""
    return identity(g.api_key)

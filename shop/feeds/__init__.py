"""The calendar feed face: GET /calendar/<token>.ics, no API key (the secret token is the credential)."""

from flask import Blueprint, Response, request

from shop.domain.appointments import feeds, ics
from shop.platform import auth
from shop.platform.errors import ApiError
from shop.platform.public_url import public_root

bp = Blueprint("feeds", __name__)
CACHE_CONTROL = "private, max-age=0, must-revalidate"


@bp.route("/calendar/<token>.ics", methods=["GET"])
def calendar_feed(token: str):
    """The feed: text/calendar, or 304 when the client's ETag is current; 404 for a token that is
    unknown or revoked (counted as a failed authentication of the address, which limits guessing)."""
    auth.refuse_blocked_address()
    opened = feeds.open_feed(token)
    if opened is None:
        auth.record_failure()
        raise ApiError(404, "not_found", "No calendar feed at this address.", param="token")
    if opened.tenant.suspended:
        raise ApiError(503, "tenant_suspended", "This account is suspended.")
    feeds.note_fetch(opened.feed)
    root = public_root()
    etag = feeds.feed_etag(opened, root)
    headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL}
    if etag in (tags := _client_etags()) or "*" in tags:
        return Response(status=304, headers=headers)
    body = ics.feed_body(opened, root, etag)
    return Response(body, status=200, headers=headers, content_type="text/calendar; charset=utf-8")


def _client_etags() -> set[str]:
    """The entity tags of If-None-Match (a weak W/ form matches too, as RFC 9110 has it for GET)."""
    header = request.headers.get("If-None-Match", "")[:2000]
    if header.strip() == "*":
        return {"*"}
    return {tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()}


calendar_feed._public = True  # the request pipeline asks no API key of it


def register(app) -> None:
    """Mount the feed route at the root (not under /api/v1)."""
    app.register_blueprint(bp)

"""The calendar feed endpoints: make, list and revoke the secret iCalendar subscription URLs."""

from flask import g
from flask.views import MethodView

from schemas.calendar_feeds import (
    CalendarFeedCreatedSchema,
    CalendarFeedCreateSchema,
    CalendarFeedDeletedSchema,
    CalendarFeedListSchema,
    CalendarFeedQueryArgsSchema,
)
from schemas.common import NoBodySchema
from shop.domain import actor
from shop.domain.appointments import feeds
from shop.platform.public_url import public_root
from shop.platform.smorest import Blueprint

blp = Blueprint(
    "calendar_feeds",
    __name__,
    description="Calendar feeds: iCalendar subscription URLs of the shop's or a tech's appointments "
    "(the feed itself, GET /calendar/{token}.ics, needs no key and is outside this document)",
)


@blp.route("/appointments/calendar_feeds")
class CalendarFeedViews(MethodView):
    @blp.arguments(CalendarFeedQueryArgsSchema, location="query")
    @blp.response(200, CalendarFeedListSchema)
    @blp.scope("appointments.read")
    @blp.doc(operationId="listCalendarFeeds")
    def get(self, args):
        """List the live calendar feeds, newest first (never their URLs)."""
        return feeds.list_feeds(g.tenant.id, args["limit"], args["cursor"])

    @blp.arguments(
        CalendarFeedCreateSchema, required=False
    )  # every field is optional: no body is a shop feed
    @blp.response(201, CalendarFeedCreatedSchema)
    @blp.scope("appointments.write")
    @blp.sensitive
    @blp.doc(operationId="createCalendarFeed")
    def post(self, body):
        """Make a calendar feed; its secret `url` is in this answer only."""
        return feeds.create_feed(g.tenant.id, body, actor.api_key(g.api_key.id), public_root())


@blp.route("/appointments/calendar_feeds/<feed_id>")
class CalendarFeedByIdViews(MethodView):
    @blp.arguments(NoBodySchema, location="json", required=False)
    @blp.response(200, CalendarFeedDeletedSchema)
    @blp.scope("appointments.write")
    @blp.doc(operationId="deleteCalendarFeed")
    def delete(self, _body, feed_id):
        """Revoke a calendar feed: its URL answers 404 from now on."""
        return feeds.revoke_feed(g.tenant.id, feed_id, actor.api_key(g.api_key.id))

"""Calendar feeds: make one (its webcal:// link shown once), list them, revoke one."""

from flask import g, redirect, url_for

from schemas.calendar_feeds import CalendarFeedCreateSchema, CalendarFeedSchema
from shop.console import forms
from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import query_value, render
from shop.domain import actor
from shop.domain.appointments import feeds
from shop.domain.appointments.slots import booking_of
from shop.platform.public_url import public_root

PAGE_SIZE = 50
FEED = CalendarFeedSchema()
DONE = {"revoked": "Revoked: that feed's address answers 404 from now on."}


@bp.route("/calendar/feeds", methods=["GET"])
@page("appointments.read")
def calendar_feeds():
    """The shop's live feeds, newest first, and the form to make one."""
    listed = feeds.list_feeds(g.tenant.id, PAGE_SIZE, query_value("cursor", 2000))
    booking, _ = booking_of(g.tenant.id)
    later = url_for("console.calendar_feeds", cursor=listed["next_cursor"]) if listed["has_more"] else None
    return render(
        "console/calendar_feeds.html",
        section="console.calendar_week",
        feeds={"rows": FEED.dump(listed["data"], many=True), "next": later},
        techs=(booking.techs if booking else []),
        notice=DONE.get(query_value("done", 20) or ""),
        can_write="appointments.write" in g.principal.scopes,
    )


@bp.route("/calendar/feeds", methods=["POST"])
@page("appointments.write")
def calendar_feed_create():
    """Make a feed through the API's own schema and rule; show its link this once (never cached)."""
    body = {
        "tech_id": forms.text("tech_id", 40, required=False),
        "hide_customer_names": forms.one_of("hide_customer_names", ("no", "yes"), "no") == "yes",
        "description": forms.text("description", 255, required=False),
    }
    loaded = forms.load(CalendarFeedCreateSchema(), body)
    feed = feeds.create_feed(g.tenant.id, loaded, _signed_in(), public_root())
    return render(
        "console/calendar_feed_made.html",
        section="console.calendar_week",
        feed=FEED.dump(feed),
        url=feed.url,
        webcal=feeds.webcal_url(feed.url),
    )


@bp.route("/calendar/feeds/revoke", methods=["POST"])
@page("appointments.write")
def calendar_feed_revoke():
    """Revoke a feed (the API's DELETE)."""
    feeds.revoke_feed(g.tenant.id, forms.text("feed_id", 40), _signed_in())
    return redirect(url_for("console.calendar_feeds", done="revoked"), 303)


def _signed_in() -> actor.Actor:
    """Who acts: the console is signed in with an API key (its id names the change)."""
    return actor.Actor(g.actor.kind, g.actor.name, "dashboard")

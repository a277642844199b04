"""The Inbox: the shop's notifications with read, archive and archive-read, and the unread count."""

from flask import g, redirect, url_for

from schemas.notifications import NotificationSchema
from shop.console import forms
from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import query_value, render
from shop.domain import notifications as inbox_rules

PAGE_SIZE = 50
NOTIFICATION = NotificationSchema()
VIEWS = ("active", "archived")
DONE = {
    "read": "Marked read.",
    "archived": "Archived.",
    "archived_read": "Archived every read notification.",
}


@bp.route("/inbox", methods=["GET"])
@page("notifications.read")
def inbox():
    """The shop's (global) notifications, newest first, with the unread count."""
    view = query_value("view", 10, allowed=VIEWS) or "active"
    args = {
        "scope": "global",
        "user_email": None,
        "archived": view == "archived",
        "unread": False,
        "limit": PAGE_SIZE,
        "cursor": query_value("cursor", 2000),
    }
    listed = inbox_rules.list_notifications(g.tenant.id, args)
    later = url_for("console.inbox", view=view, cursor=listed["next_cursor"]) if listed["has_more"] else None
    return render(
        "console/inbox.html",
        view=view,
        rows=NOTIFICATION.dump(listed["data"], many=True),
        next=later,
        unread=inbox_rules.count_unread(g.tenant.id, "global", None)["unread"],
        notice=DONE.get(query_value("done", 20) or ""),
        can_write="notifications.write" in g.principal.scopes,
    )


@bp.route("/inbox/read", methods=["POST"])
@page("notifications.write")
def mark_read():
    """Mark one notification read."""
    inbox_rules.set_flags(g.tenant.id, forms.record_id("notification_id"), "read")
    return redirect(url_for("console.inbox", done="read"), 303)


@bp.route("/inbox/archive", methods=["POST"])
@page("notifications.write")
def archive():
    """Archive one notification (it is read from then on)."""
    inbox_rules.set_flags(g.tenant.id, forms.record_id("notification_id"), "archive")
    return redirect(url_for("console.inbox", done="archived"), 303)


@bp.route("/inbox/archive-read", methods=["POST"])
@page("notifications.write")
def archive_read():
    """Archive every read notification of the active inbox."""
    inbox_rules.archive_read(g.tenant.id, False)
    return redirect(url_for("console.inbox", done="archived_read"), 303)

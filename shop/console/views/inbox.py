"""The Inbox: notifications with read, archive and archive-read, and the unread count."""

from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import render


@bp.route("/inbox", methods=["GET"])
@page("notifications.read")
def inbox():
    """The active inbox."""
    return render("console/inbox.html")

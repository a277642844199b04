"""The in-app notification inbox: list, count, retrieve, and the read/archive flags."""

from flask import g

from schemas.common import NoBodySchema
from schemas.notifications import (
    ArchiveReadArgsSchema,
    NotificationArchiveResultSchema,
    NotificationCountSchema,
    NotificationListSchema,
    NotificationQueryArgsSchema,
    NotificationSchema,
    NotificationScopeArgsSchema,
)
from shop.domain import notifications as inbox
from shop.platform.smorest import Blueprint

blp = Blueprint("notifications", __name__, description="In-app notifications")


@blp.route("/notifications", methods=["GET"])
@blp.arguments(NotificationQueryArgsSchema, location="query")
@blp.response(200, NotificationListSchema)
@blp.scope("notifications.read")
@blp.doc(operationId="listNotifications")
def list_notifications(args):
    """List the active inbox (or the archive), newest first."""
    return inbox.list_notifications(g.tenant.id, args)


# count and archive-read are routed before <id> so that neither is read as an id
@blp.route("/notifications/count", methods=["GET"])
@blp.arguments(NotificationScopeArgsSchema, location="query")
@blp.response(200, NotificationCountSchema)
@blp.scope("notifications.read")
@blp.doc(operationId="countUnreadNotifications")
def count_notifications(args):
    """Count the unread notifications of the active inbox."""
    return inbox.count_unread(g.tenant.id, args["scope"], args["user_email"])


@blp.route("/notifications/archive-read", methods=["POST"])
@blp.arguments(ArchiveReadArgsSchema, location="query")
@blp.arguments(NoBodySchema, location="json", required=False)
@blp.response(200, NotificationArchiveResultSchema)
@blp.scope("notifications.write")
@blp.doc(operationId="archiveReadNotifications")
def archive_read(args, _body):
    """Archive the read global notifications (every one with all=true)."""
    return inbox.archive_read(g.tenant.id, args["all"])


@blp.route("/notifications/<id>", methods=["GET"])
@blp.path_id()
@blp.arguments(NotificationScopeArgsSchema, location="query")
@blp.response(200, NotificationSchema)
@blp.scope("notifications.read")
@blp.doc(operationId="getNotification")
def get_notification(args, id):
    """Retrieve a notification."""
    return inbox.get_notification(g.tenant.id, id, args["scope"], args["user_email"])


@blp.route("/notifications/<id>/read", methods=["POST"])
@blp.path_id()
@blp.arguments(NoBodySchema, location="json", required=False)
@blp.response(200, NotificationSchema)
@blp.refuses(403, "insufficient_scope; or user_scope_read_only: user-scoped notifications are read-only")
@blp.scope("notifications.write")
@blp.doc(operationId="markNotificationRead")
def read_notification(_body, id):
    """Mark a notification read."""
    return inbox.set_flags(g.tenant.id, id, "read")


@blp.route("/notifications/<id>/unread", methods=["POST"])
@blp.path_id()
@blp.arguments(NoBodySchema, location="json", required=False)
@blp.response(200, NotificationSchema)
@blp.refuses(403, "insufficient_scope; or user_scope_read_only: user-scoped notifications are read-only")
@blp.scope("notifications.write")
@blp.doc(operationId="markNotificationUnread")
def unread_notification(_body, id):
    """Mark a notification unread."""
    return inbox.set_flags(g.tenant.id, id, "unread")


@blp.route("/notifications/<id>/archive", methods=["POST"])
@blp.path_id()
@blp.arguments(NoBodySchema, location="json", required=False)
@blp.response(200, NotificationSchema)
@blp.refuses(403, "insufficient_scope; or user_scope_read_only: user-scoped notifications are read-only")
@blp.scope("notifications.write")
@blp.doc(operationId="archiveNotification")
def archive_notification(_body, id):
    """Archive a notification (it is read from then on)."""
    return inbox.set_flags(g.tenant.id, id, "archive")


@blp.route("/notifications/<id>/unarchive", methods=["POST"])
@blp.path_id()
@blp.arguments(NoBodySchema, location="json", required=False)
@blp.response(200, NotificationSchema)
@blp.refuses(403, "insufficient_scope; or user_scope_read_only: user-scoped notifications are read-only")
@blp.scope("notifications.write")
@blp.doc(operationId="unarchiveNotification")
def unarchive_notification(_body, id):
    """Return a notification to the active inbox."""
    return inbox.set_flags(g.tenant.id, id, "unarchive")

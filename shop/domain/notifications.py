"""The notification inbox: visibility, audiences (the spec's `scope`), read/archive flags, in-app creation.

A notification tied to a hidden or soft-deleted ticket does not exist on the public surface: every
query here starts from `inbox()`, which keeps only rows without a ticket or with a visible one.
"""

from peewee import SQL, fn

from schemas.notifications import NotificationSchema
from shop import clock
from shop.db import write_transaction
from shop.domain.records.tickets import visible_tickets
from shop.models import Notification, Ticket, User
from shop.platform.errors import ApiError, not_found
from shop.platform.pagination import paginate

ORDER = [(Notification.created_at, True), (Notification.id, True)]
NOTIFICATION = NotificationSchema()


def inbox(tenant_id: str):
    """The tenant's notifications that are visible: no ticket, or a ticket neither hidden nor deleted."""
    # a correlated EXISTS costs one ticket primary-key lookup per candidate row, so a page or a count
    # reads only the rows it needs, never the whole ticket table
    visible = visible_tickets(tenant_id).select(SQL("1")).where(Ticket.id == Notification.ticket)
    return Notification.for_tenant(tenant_id).where(Notification.ticket.is_null() | fn.EXISTS(visible))


def teammate_ids(tenant_id: str, email: str) -> list[int]:
    """The ids of the tenant's teammates with this email, compared case-insensitively."""
    query = User.for_tenant(tenant_id).select(User.id).where(fn.LOWER(User.email) == email.lower())
    return [user.id for user in query]


def audience_inbox(tenant_id: str, audience: str, user_email: str | None):
    """The visible inbox of one audience (the spec's scope: global, or one teammate's user_email)."""
    if audience not in ("global", "user"):
        raise ApiError(400, "invalid_scope", "scope must be `global` or `user`.", param="scope")
    if audience == "global":
        return inbox(tenant_id).where((Notification.scope == "global") & Notification.user.is_null())
    if not user_email:
        raise ApiError(
            400, "missing_user_email", "user_email is required when scope=user.", param="user_email"
        )
    users = teammate_ids(tenant_id, user_email)
    return inbox(tenant_id).where((Notification.scope == "user") & Notification.user.in_(users))


def list_notifications(tenant_id: str, args: dict) -> dict:
    """One page of an audience's active inbox (or its archive), newest first."""
    query = audience_inbox(tenant_id, args["scope"], args["user_email"])
    query = query.where(Notification.archived == args["archived"])
    if args["unread"] and not args["archived"]:
        query = query.where(Notification.read == False)  # noqa: E712 (peewee expression)
    page = paginate(query, ORDER, args["limit"], args["cursor"])
    return page.envelope()


def count_unread(tenant_id: str, audience: str, user_email: str | None) -> dict:
    """The exact number of unread notifications in an audience's active inbox."""
    query = audience_inbox(tenant_id, audience, user_email)
    unread = query.where((Notification.archived == False) & (Notification.read == False)).count()  # noqa: E712
    return {"object": "notification_count", "scope": audience, "unread": unread}


def get_notification(
    tenant_id: str, notification_id: int, audience: str, user_email: str | None
) -> Notification:
    """A global notification, or a user one when scope=user names its teammate; else 404."""
    visible = audience_inbox(tenant_id, audience, user_email)
    row = visible.where(Notification.id == notification_id).first()
    if row is None and audience == "user":
        row = audience_inbox(tenant_id, "global", None).where(Notification.id == notification_id).first()
    if row is None:
        raise not_found("notification", notification_id)
    return row


def _writable(tenant_id: str, notification_id: int) -> Notification:
    """A visible notification for a flag change; user rows are read-only through the API."""
    row = inbox(tenant_id).where(Notification.id == notification_id).first()
    if row is None:
        raise not_found("notification", notification_id)
    if row.scope != "global":
        raise ApiError(
            403,
            "user_scope_read_only",
            "User-scoped notifications are read-only through the API.",
            param="id",
        )
    return row


def set_flags(tenant_id: str, notification_id: int, action: str) -> Notification:
    """read, unread, archive or unarchive one global notification; repeating one changes nothing."""
    with write_transaction():
        row = _writable(tenant_id, notification_id)
        _apply(row, action)
        row.save(only=[Notification.read, Notification.archived, Notification.archived_at])
    return row


def _apply(row: Notification, action: str) -> None:
    if action == "read":
        row.read = True
    elif action == "unread":
        row.read = False
    elif action == "archive":
        # archiving again keeps the first archived_at: the row was dismissed then
        row.archived_at = row.archived_at if row.archived else clock.now()
        row.archived, row.read = True, True
    elif action == "unarchive":
        # back to the active inbox as it left it: read (see docs/decisions.md)
        row.archived, row.archived_at = False, None


def archive_read(tenant_id: str, include_unread: bool) -> dict:
    """Archive the read (or, with all, every) active global notification of the visible inbox."""
    targets = audience_inbox(tenant_id, "global", None).where(Notification.archived == False)  # noqa: E712
    if not include_unread:
        targets = targets.where(Notification.read == True)  # noqa: E712
    ids = targets.select(Notification.id)
    with write_transaction():
        # the conditions again on the rows written: a row changed meanwhile by another transaction
        # is re-checked as it is now (PostgreSQL re-evaluates them on the row it waited for)
        again = Notification.archived == False  # noqa: E712
        if not include_unread:
            again &= Notification.read == True  # noqa: E712
        archived = (
            Notification.update(archived=True, archived_at=clock.now(), read=True)
            .where(Notification.id.in_(ids) & again)
            .execute()
        )
    return {
        "object": "notification_archive_result",
        "scope": "global",
        "cleared_all": include_unread,
        "archived_count": archived,
    }


def create_notification(tenant_id: str, fields: dict, **stored) -> Notification:
    """Insert a notification from parsed activity or fixture fields; 400 names the field at fault."""
    fields = dict(fields)
    user = _teammate(tenant_id, fields.pop("scope"), fields.pop("user_email"))
    ticket_id = fields.pop("ticket_id")
    if ticket_id is not None and not Ticket.for_tenant(tenant_id).where(Ticket.id == int(ticket_id)).exists():
        raise ApiError(
            400, "invalid_field", f"ticket_id: no ticket {ticket_id} in this tenant.", param="ticket_id"
        )
    return Notification.create_row(
        tenant=tenant_id,
        scope="user" if user else "global",
        user=user,
        ticket=None if ticket_id is None else int(ticket_id),
        **fields,
        **stored,
    )


def _teammate(tenant_id: str, audience: str, user_email: str | None) -> int | None:
    if audience == "global":
        if user_email is not None:
            raise ApiError(
                400,
                "invalid_field",
                "user_email: only user-scoped notifications have one.",
                param="user_email",
            )
        return None
    if user_email is None:
        raise ApiError(
            400, "missing_user_email", "user_email: required when scope is user.", param="user_email"
        )
    users = teammate_ids(tenant_id, user_email)
    if not users:
        raise ApiError(
            400, "invalid_field", f"user_email: no teammate {user_email} in this tenant.", param="user_email"
        )
    return users[0]


def notification_activity(tenant_id: str, data: dict) -> dict:
    """In-app activity `notification`: add one inbox row (global or for a teammate)."""
    return NOTIFICATION.dump(create_notification(tenant_id, data))

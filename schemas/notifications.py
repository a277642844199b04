"""Notification objects, the inbox query parameters and the fixture/activity input."""

import marshmallow as ma

from schemas.common import PaginationArgsSchema, QueryBool, Schema, Stamp, UtcDateTime, list_schema

Str = ma.fields.String


class NotificationSchema(Schema):
    object = ma.fields.Constant("notification")
    id = ma.fields.Integer(metadata={"example": 50})
    scope = Str(metadata={"example": "global"})
    type = Str(allow_none=True, metadata={"example": "new_ticket"})
    message = Str(allow_none=True, metadata={"example": "New ticket 1001"})
    ticket_id = Str(allow_none=True, metadata={"example": "1001"})
    from_email = Str(allow_none=True, metadata={"example": None})
    read = ma.fields.Boolean()
    archived = ma.fields.Boolean()
    archived_at = Stamp(allow_none=True, metadata={"example": None})
    details = ma.fields.Dict(allow_none=True, metadata={"example": {"priority": "high"}})
    created_at = Stamp(allow_none=True, metadata={"example": "2026-11-01T10:00:00.000Z"})


class NotificationCountSchema(Schema):
    object = ma.fields.Constant("notification_count")
    scope = Str(metadata={"example": "global"})
    unread = ma.fields.Integer(metadata={"example": 3})


class NotificationArchiveResultSchema(Schema):
    object = ma.fields.Constant("notification_archive_result")
    scope = ma.fields.Constant("global")
    cleared_all = ma.fields.Boolean()
    archived_count = ma.fields.Integer(metadata={"example": 12})


class NotificationScopeArgsSchema(Schema):
    """scope and user_email; their values are checked by the domain (invalid_scope, missing_user_email)."""

    class Meta:
        unknown = ma.EXCLUDE

    # a string here so that an array or object is invalid_query; a wrong string is invalid_scope
    scope = Str(
        load_default="global",
        metadata={"description": "`global` (default) or `user`.", "enum": ["global", "user"]},
    )
    user_email = Str(
        load_default=None,
        validate=ma.validate.Length(max=320),
        metadata={"description": "The teammate's email; required when scope=user."},
    )


class NotificationQueryArgsSchema(NotificationScopeArgsSchema, PaginationArgsSchema):
    unread = QueryBool(load_default=False, metadata={"description": "Only unread (ignored when archived)."})
    archived = QueryBool(load_default=False, metadata={"description": "The archived instead of the active."})


class ArchiveReadArgsSchema(Schema):
    class Meta:
        unknown = ma.EXCLUDE

    all = QueryBool(load_default=False, metadata={"description": "Also archive unread notifications."})


class NotificationInputSchema(Schema):
    """A notification as in-app activity or a fixture creates it."""

    scope = Str(load_default="global", validate=ma.validate.OneOf(("global", "user")))
    user_email = Str(allow_none=True, load_default=None, validate=ma.validate.Length(min=1, max=320))
    type = Str(allow_none=True, load_default=None, validate=ma.validate.Length(max=64))
    message = Str(allow_none=True, load_default=None, validate=ma.validate.Length(max=10_000))
    ticket_id = Str(
        allow_none=True,
        load_default=None,
        validate=ma.validate.Regexp(r"^[1-9][0-9]{0,9}$", error="Ticket ids are digit strings."),
    )
    from_email = Str(allow_none=True, load_default=None, validate=ma.validate.Length(max=320))
    details = ma.fields.Dict(allow_none=True, load_default=None)


class NotificationFixture(NotificationInputSchema):
    """A fixture entry: the activity fields plus id, flags and timestamps (ids are kept)."""

    id = ma.fields.Integer(strict=True, validate=ma.validate.Range(min=1, max=2_147_483_647))
    read = ma.fields.Boolean()
    archived = ma.fields.Boolean(load_default=False)
    archived_at = UtcDateTime(allow_none=True)
    created_at = UtcDateTime()


NotificationListSchema = list_schema(NotificationSchema, "NotificationListSchema")

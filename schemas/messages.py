"""Conversations, messages and the send request."""

import marshmallow as ma

from schemas.common import Count, Int32, PaginationArgsSchema, QueryInt32, Schema, Stamp, list_schema

Str = ma.fields.String
# what an email subject may hold: no C0 or C1 control, DEL, or Unicode line or paragraph separator
# (each is a line break or worse in a header); the same class in Python and in the document's regex
SUBJECT_CHARACTERS = "[^\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029]"
PUBLIC_DELIVERY_STATUSES = ("queued", "logged", "sent", "delivered", "undelivered", "failed")


class ConversationSchema(Schema):
    object = ma.fields.Constant("conversation")
    id = ma.fields.Integer(metadata={"example": 10})
    customer_id = ma.fields.Integer(allow_none=True, metadata={"example": 1})
    customer_email = Str(allow_none=True, metadata={"example": "ann@example.com"})
    customer_name = Str(allow_none=True, metadata={"example": "Ann Lee"})
    last_inbound_at = Stamp(allow_none=True)
    last_outbound_at = Stamp(allow_none=True)
    unread_count = Count(metadata={"example": 1})
    assigned_user_id = ma.fields.Integer(allow_none=True)
    created_at = Stamp(metadata={"example": "2026-11-01T10:00:00.000Z"})
    updated_at = Stamp(metadata={"example": "2026-11-01T11:00:00.000Z"})


class MessageSchema(Schema):
    object = ma.fields.Constant("message")
    id = ma.fields.Integer(metadata={"example": 100})
    conversation_id = ma.fields.Integer(metadata={"example": 10})
    channel = Str(metadata={"example": "sms"})
    direction = Str(metadata={"example": "inbound"})
    body = Str(allow_none=True, metadata={"example": "Is it ready?"})
    subject = Str(allow_none=True)
    sender = Str(allow_none=True, metadata={"example": "+15555550100"})
    sent_from_ticket_id = Str(allow_none=True)
    external_uuid = Str(allow_none=True)
    in_reply_to = Str(allow_none=True)
    media_urls = ma.fields.List(Str(), allow_none=True)
    attachments = ma.fields.List(ma.fields.Dict(), allow_none=True)
    to = ma.fields.Method(
        "_to",
        metadata={"type": "string", "nullable": True, "description": "Recipient of an outbound message."},
    )
    delivery_status = ma.fields.Method(
        "_delivery_status",
        metadata={
            "type": "string",
            "nullable": True,
            "enum": [*PUBLIC_DELIVERY_STATUSES, None],
            "description": "Outbound only: logged means the log provider took it (nothing left the machine).",
        },
    )
    delivery_error = Str(allow_none=True)
    full_body = Str(
        allow_none=True,
        metadata={"description": "An inbound email's whole text when body is the reply without its quote."},
    )
    created_at = Stamp(metadata={"example": "2026-11-01T10:00:00.000Z"})

    def _to(self, message) -> str | None:
        return message.recipient if message.direction == "outbound" else None

    def _delivery_status(self, message) -> str | None:
        if message.direction != "outbound":
            return None
        # a send in progress is still queued to the client
        return "queued" if message.delivery_status == "sending" else message.delivery_status


class MessageSendResultSchema(Schema):
    object = ma.fields.Constant("message_send_result")
    ok = ma.fields.Boolean(metadata={"example": True})
    ticket_id = Str(metadata={"example": "1001"})
    channel = Str(metadata={"example": "sms"})
    message_id = ma.fields.Integer(metadata={"example": 101, "description": "The queued outbound message."})


class ConversationQueryArgsSchema(PaginationArgsSchema):
    customer_id = QueryInt32(metadata={"error_code": "invalid_id"})


def _text_required(limit: int) -> dict:
    """content or body (aliases), one of them at least, each at most `limit` characters."""
    return {
        "properties": {"content": {"maxLength": limit}, "body": {"maxLength": limit}},
        "anyOf": [{"required": ["content"]}, {"required": ["body"]}],
    }


class MessageSendSchema(Schema):
    """POST /messages/send; per-channel requirements and limits are checked by the send pipeline."""

    # the per-channel rules the pipeline enforces, for the document: SMS needs `to` (at most 50)
    # and takes no subject; email's `to`, if sent, is the customer's address
    OPENAPI = {
        "oneOf": [
            {
                "title": "SMS",
                **_text_required(1_600),
                "required": ["to"],
                "not": {"required": ["subject"]},
                "properties": {
                    **_text_required(1_600)["properties"],
                    "channel": {"enum": ["sms"]},
                    "to": {"maxLength": 50},
                },
            },
            {
                "title": "Email",
                **_text_required(100_000),
                "properties": {
                    **_text_required(100_000)["properties"],
                    "channel": {"enum": ["email"]},
                    "to": {"format": "email"},
                },
            },
        ]
    }

    ticket_id = Str(required=True, validate=ma.validate.Length(min=1, max=255), metadata={"example": "1001"})
    channel = Str(
        required=True,
        validate=ma.validate.OneOf(("sms", "email")),
        metadata={"error_code": "invalid_channel", "example": "sms"},
    )
    content = Str(validate=ma.validate.Length(max=100_000), metadata={"example": "Your phone is ready."})
    body = Str(validate=ma.validate.Length(max=100_000))
    to = Str(validate=ma.validate.Length(min=1, max=320), metadata={"example": "+15555550100"})
    subject = Str(
        validate=ma.validate.Length(min=1, max=998),
        # the domain's rule (shop.domain.messaging.sending.check_subject), so the document says it
        metadata={"pattern": "^" + SUBJECT_CHARACTERS + "*$"},
    )


class SuppressionSchema(Schema):
    object = ma.fields.Constant("message_suppression")
    id = ma.fields.Integer(metadata={"example": 3})
    channel = Str(metadata={"example": "sms"})
    address = Str(metadata={"example": "+15555550100"})
    reason = Str(
        metadata={
            "enum": ["stop_keyword", "provider_opt_out", "bounce", "manual", "fixture"],
            "example": "manual",
        }
    )
    created_at = Stamp(metadata={"example": "2026-11-01T10:00:00.000Z"})


class SuppressionCreateSchema(Schema):
    channel = Str(
        required=True,
        validate=ma.validate.OneOf(("sms", "email")),
        metadata={"error_code": "invalid_channel", "example": "sms"},
    )
    address = Str(
        required=True,
        validate=ma.validate.Length(min=1, max=320),
        metadata={"example": "+15555550100"},
    )


class SuppressionQueryArgsSchema(PaginationArgsSchema):
    channel = Str(validate=ma.validate.OneOf(("sms", "email")), metadata={"error_code": "invalid_channel"})


class SuppressionDeletedSchema(Schema):
    object = ma.fields.Constant("message_suppression")
    id = ma.fields.Integer()
    deleted = ma.fields.Constant(True)


class ConversationUpdateSchema(Schema):
    assigned_user_id = Int32(required=True, allow_none=True, metadata={"example": 7})


ConversationListSchema = list_schema(ConversationSchema, "ConversationListSchema")
MessageListSchema = list_schema(MessageSchema, "MessageListSchema")
SuppressionListSchema = list_schema(SuppressionSchema, "SuppressionListSchema")

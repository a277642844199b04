"""Messages: conversations, their messages, and sending on a ticket."""

from flask import current_app, g
from flask.views import MethodView

from schemas.common import NoBodySchema, PaginationArgsSchema
from schemas.messages import (
    ConversationListSchema,
    ConversationQueryArgsSchema,
    ConversationSchema,
    ConversationUpdateSchema,
    MessageListSchema,
    MessageSchema,
    MessageSendResultSchema,
    MessageSendSchema,
    SuppressionCreateSchema,
    SuppressionDeletedSchema,
    SuppressionListSchema,
    SuppressionQueryArgsSchema,
    SuppressionSchema,
)
from shop.domain.messaging import conversations, suppressions
from shop.domain.messaging import sending as send_pipeline
from shop.platform.smorest import Blueprint

blp = Blueprint("messages", __name__, description="Conversations and messages")


def _list_conversations(args):
    return conversations.list_conversations(
        g.tenant.id, args.get("customer_id"), args["limit"], args["cursor"]
    )


@blp.route("/messages/conversations")
@blp.arguments(ConversationQueryArgsSchema, location="query")
@blp.response(200, ConversationListSchema)
@blp.scope("messages.read")
@blp.doc(operationId="listConversations")
def list_conversations(args):
    """List conversations, most recently updated first."""
    return _list_conversations(args)


@blp.route("/messages")
@blp.arguments(ConversationQueryArgsSchema, location="query")
@blp.response(200, ConversationListSchema)
@blp.scope("messages.read")
@blp.doc(operationId="listConversationsAlias")
def list_conversations_alias(args):
    """List conversations (alias of /messages/conversations)."""
    return _list_conversations(args)


@blp.route("/messages/conversations/<conversation_id>")
@blp.path_id("conversation_id")
@blp.response(200, ConversationSchema)
@blp.scope("messages.read")
@blp.doc(operationId="getConversation")
def get_conversation(conversation_id):
    """Retrieve a conversation."""
    return conversations.get_conversation(g.tenant.id, conversation_id)


@blp.route("/messages/conversations/<conversation_id>/messages")
@blp.path_id("conversation_id")
@blp.arguments(PaginationArgsSchema, location="query")
@blp.response(200, MessageListSchema)
@blp.scope("messages.read")
@blp.doc(operationId="listConversationMessages")
def list_messages(args, conversation_id):
    """List a conversation's messages, newest first."""
    return conversations.list_messages(g.tenant.id, conversation_id, args["limit"], args["cursor"])


@blp.route("/messages/<message_id>")
@blp.path_id("message_id")
@blp.response(200, MessageSchema)
@blp.scope("messages.read")
@blp.doc(operationId="getMessage")
def get_message(message_id):
    """Retrieve a message."""
    return conversations.get_message(g.tenant.id, message_id)


@blp.route("/messages/send", methods=["POST"])
@blp.arguments(MessageSendSchema)
@blp.response(202, MessageSendResultSchema)
@blp.refuses(404, "not_found: no such visible ticket (param ticket_id)")
@blp.refuses(422, "send_failed: suppressed, invalid contact or missing consent")
@blp.refuses(429, "rate_limited: the key's bucket or the tenant's send rate is exhausted")
@blp.scope("messages.write")
@blp.doc(operationId="sendMessage")
def send(body):
    """Send an SMS or email on a ticket (delivery is asynchronous)."""
    return send_pipeline.send(
        g.tenant, body, send_pipeline.sender_for(body["channel"], current_app.config, g.tenant.id)
    )


@blp.route("/messages/conversations/<conversation_id>", methods=["PATCH"])
@blp.path_id("conversation_id")
@blp.arguments(ConversationUpdateSchema)
@blp.response(200, ConversationSchema)
@blp.refuses(404, "not_found: no such conversation, or assigned_user_id names no teammate of the shop")
@blp.scope("messages.write")
@blp.doc(operationId="updateConversation")
def update_conversation(body, conversation_id):
    """Assign a conversation to a teammate (or null: nobody)."""
    return conversations.assign(g.tenant.id, conversation_id, body["assigned_user_id"])


@blp.route("/messages/conversations/<conversation_id>/read", methods=["POST"])
@blp.path_id("conversation_id")
@blp.arguments(NoBodySchema, location="json", required=False)
@blp.response(200, ConversationSchema)
@blp.scope("messages.write")
@blp.doc(operationId="markConversationRead")
def mark_read(_body, conversation_id):
    """Mark every inbound message of a conversation read (unread_count 0)."""
    return conversations.mark_read(g.tenant.id, conversation_id)


@blp.route("/messages/suppressions")
class SuppressionViews(MethodView):
    @blp.arguments(SuppressionQueryArgsSchema, location="query")
    @blp.response(200, SuppressionListSchema)
    @blp.scope("messages.read")
    @blp.doc(operationId="listSuppressions")
    def get(self, args):
        """List the addresses the shop must not message, newest first."""
        return suppressions.list_suppressions(g.tenant.id, args.get("channel"), args["limit"], args["cursor"])

    @blp.arguments(SuppressionCreateSchema)
    @blp.response(201, SuppressionSchema)
    @blp.alt_response(200, schema=SuppressionSchema, description="The address was already suppressed.")
    @blp.scope("messages.write")
    @blp.doc(operationId="createSuppression")
    def post(self, body):
        """Suppress an address (reason manual); 200 with the existing row when it already is."""
        row, created = suppressions.add_suppression(g.tenant.id, body["channel"], body["address"])
        return row, 201 if created else 200


@blp.route("/messages/suppressions/<suppression_id>", methods=["DELETE"])
@blp.path_id("suppression_id")
@blp.arguments(NoBodySchema, location="json", required=False)
@blp.response(200, SuppressionDeletedSchema)
@blp.scope("messages.write")
@blp.doc(operationId="deleteSuppression")
def delete_suppression(_body, suppression_id):
    """Remove an address from the suppression list."""
    return suppressions.delete_suppression(g.tenant.id, suppression_id)

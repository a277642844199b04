"""Messages: conversations, their messages, and sending on a ticket."""

from flask import current_app, g
from flask.views import MethodView

from schemas.common import PaginationArgsSchema
from schemas.messages import (
    ConversationListSchema,
    ConversationQueryArgsSchema,
    ConversationSchema,
    MessageListSchema,
    MessageSchema,
    MessageSendResultSchema,
    MessageSendSchema,
)
from shop.domain.messaging import conversations
from shop.domain.messaging import sending as send_pipeline
from shop.platform.ids import parse_id
from shop.platform.smorest import Blueprint

blp = Blueprint("messages", __name__, description="Conversations and messages")


def _list_conversations(args):
    return conversations.list_conversations(g.tenant.id, args.get("customer_id"), args["limit"],
                                            args["cursor"])


@blp.route("/messages/conversations")
class ConversationViews(MethodView):
    @blp.arguments(ConversationQueryArgsSchema, location="query")
    @blp.response(200, ConversationListSchema)
    @blp.scope("messages.read")
    @blp.doc(operationId="listConversations")
    def get(self, args):
        """List conversations, most recently updated first."""
        return _list_conversations(args)


@blp.route("/messages")
class ConversationAliasViews(MethodView):
    @blp.arguments(ConversationQueryArgsSchema, location="query")
    @blp.response(200, ConversationListSchema)
    @blp.scope("messages.read")
    @blp.doc(operationId="listConversationsAlias")
    def get(self, args):
        """List conversations (alias of /messages/conversations)."""
        return _list_conversations(args)


@blp.route("/messages/conversations/<conversation_id>")
class ConversationByIdViews(MethodView):
    @blp.response(200, ConversationSchema)
    @blp.scope("messages.read")
    @blp.doc(operationId="getConversation")
    def get(self, conversation_id):
        """Retrieve a conversation."""
        found = conversations.get_conversation(g.tenant.id, parse_id(conversation_id))
        return conversations.conversation_dto(found)


@blp.route("/messages/conversations/<conversation_id>/messages")
class ConversationMessagesViews(MethodView):
    @blp.arguments(PaginationArgsSchema, location="query")
    @blp.response(200, MessageListSchema)
    @blp.scope("messages.read")
    @blp.doc(operationId="listConversationMessages")
    def get(self, args, conversation_id):
        """List a conversation's messages, newest first."""
        return conversations.list_messages(g.tenant.id, parse_id(conversation_id), args["limit"],
                                           args["cursor"])


@blp.route("/messages/<message_id>")
class MessageByIdViews(MethodView):
    @blp.response(200, MessageSchema)
    @blp.scope("messages.read")
    @blp.doc(operationId="getMessage")
    def get(self, message_id):
        """Retrieve a message."""
        return conversations.message_dto(conversations.get_message(g.tenant.id, parse_id(message_id)))


@blp.route("/messages/send")
class MessageSendViews(MethodView):
    @blp.arguments(MessageSendSchema)
    @blp.response(202, MessageSendResultSchema)
    @blp.scope("messages.write")
    @blp.refuses(404, "not_found: no such ticket")
    @blp.refuses(422, "send_failed: suppressed, invalid contact or missing consent")
    @blp.refuses(429, "rate_limited: the key's bucket or the tenant's send rate is exhausted")
    @blp.doc(operationId="sendMessage")
    def post(self, body):
        """Send an SMS or email on a ticket (delivery is asynchronous)."""
        config = current_app.config
        sender = config["SMTP_FROM"] if body["channel"] == "email" else config["SMS_FROM"]
        return send_pipeline.send(g.tenant, body, sender)

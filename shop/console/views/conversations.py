"""Conversations: the threads, a thread's messages (read state, delivery status), and send on a ticket."""

from flask import current_app, g, redirect, url_for

from schemas.messages import ConversationSchema, MessageSendSchema
from shop.console import forms, nav, threads
from shop.console.blueprint import bp
from shop.console.guard import page
from shop.console.pages import query_value, render
from shop.domain.messaging import conversations, sending
from shop.platform.ids import parse_id

nav.add(nav.NavItem("console.conversations_list", "Conversations", "messages.read"))
CONVERSATION = ConversationSchema()
CHANNELS = ("sms", "email")


@bp.route("/conversations", methods=["GET"])
@page("messages.read")
def conversations_list():
    """The tenant's threads, most recently updated first, and a send form for any ticket."""
    listed = conversations.list_conversations(
        g.tenant.id, None, threads.PAGE_SIZE, query_value("cursor", 2000)
    )
    later = (
        url_for("console.conversations_list", cursor=listed["next_cursor"]) if listed["has_more"] else None
    )
    return render(
        "console/conversations.html",
        rows=CONVERSATION.dump(listed["data"], many=True),
        next=later,
        can_write="messages.write" in g.principal.scopes,
    )


@bp.route("/conversations/<conversation_id>", methods=["GET"])
@page("messages.read")
def conversation(conversation_id: str):
    """A thread's messages, newest first, with the send form (the page looks again while one is in flight)."""
    shown = threads.thread(
        g.tenant.id, parse_id(conversation_id, "conversation_id"), query_value("cursor", 2000)
    )
    later = None
    if shown["has_more"]:
        later = url_for("console.conversation", conversation_id=conversation_id, cursor=shown["next_cursor"])
    return render(
        "console/conversation.html",
        section="console.conversations_list",
        next=later,
        notice="Queued: it goes out shortly; its status shows below."
        if query_value("done", 10) == "sent"
        else None,
        can_write="messages.write" in g.principal.scopes,
        **shown,
    )


@bp.route("/conversations/send", methods=["POST"])
@page("messages.write")
def send_on_ticket():
    """Send on a ticket through the API's schema and pipeline (validation, suppression, consent, rate)."""
    channel = forms.one_of("channel", CHANNELS, "sms")
    body = {
        "ticket_id": forms.text("ticket_id", 255),
        "channel": channel,
        "content": forms.text("content", sending.LIMITS["email"]),
        "to": forms.text("to", 320, required=False),
        "subject": forms.text("subject", 998, required=False),
    }
    loaded = forms.load(MessageSendSchema(), {k: v for k, v in body.items() if v is not None})
    sent = sending.send_message(
        g.tenant, loaded, sending.sender_for(channel, current_app.config, g.tenant.id)
    )
    thread_id = threads.conversation_of(g.tenant.id, sent.message_id)
    target = url_for("console.conversation", conversation_id=thread_id, done="sent")
    return redirect(f"{target}#message-{sent.message_id}", 303)


@bp.route("/conversations/<conversation_id>/read", methods=["POST"])
@page("messages.write")
def conversation_read(conversation_id: str):
    """Mark the thread's inbound messages read (the API's POST .../read)."""
    found = conversations.mark_read(g.tenant.id, parse_id(conversation_id, "conversation_id"))
    return redirect(url_for("console.conversation", conversation_id=found.id), 303)

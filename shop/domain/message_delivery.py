"""Outbound message delivery, run by the consumer: claim, hand to the provider, record, retry."""

import logging
from datetime import timedelta

from shop import clock
from shop.db import named_sql, run_sql, write_sql, write_transaction
from shop.domain import providers
from shop.domain.conversations import message_dto
from shop.domain.events import emit
from shop.models import Message

log = logging.getLogger("shop.messages")
CLAIM_SECONDS = 300  # a send that takes longer is presumed dead and may be claimed again


def retry_delays(config) -> list[float]:
    """Seconds to wait before each retry of a transient failure."""
    return [float(x) for x in str(config["SEND_RETRY_DELAYS"]).split(",") if x.strip()]


CLAIM_SQL = named_sql(
    "UPDATE message SET delivery_status = 'sending', claimed_until = :until "
    "WHERE id = :id AND direction = 'outbound' AND ("
    "(delivery_status = 'queued' AND next_attempt_at <= :now) "
    "OR (delivery_status = 'sending' AND claimed_until < :now)) "
    f"RETURNING {Message.columns()}"
)
SENT_SQL = named_sql(
    "UPDATE message SET delivery_status = 'sent', claimed_until = NULL, delivery_error = NULL, "
    "external_uuid = :external, message_id_header = COALESCE(:header, message_id_header), "
    "delivery_attempts = delivery_attempts + 1 WHERE id = :id"
)


def claim(message_id: int) -> Message | None:
    """Take a queued message (or one whose sender died) for sending; None if another has it."""
    now = clock.now()
    rows = write_sql(CLAIM_SQL, {"id": message_id, "now": now,
                               "until": now + timedelta(seconds=CLAIM_SECONDS)})
    return Message.from_row(rows[0]) if rows else None


def attempt(message_id: int, config) -> float | None:
    """One delivery attempt; returns the delay before the next one, or None when done."""
    message = claim(message_id)
    if message is None:
        return None
    outgoing = providers.Outgoing(channel=message.channel, recipient=message.recipient, body=message.body,
                                  subject=message.subject, sender=message.sender,
                                  in_reply_to=message.in_reply_to, reference=str(message.id))
    try:
        accepted = providers.deliver(outgoing, config.get("SMTP_URL"), config.get("SMS_GATEWAY_URL"))
    except providers.TransientFailure as error:
        return _failed(message, str(error), retry_delays(config))
    except providers.PermanentFailure as error:
        return _failed(message, str(error), [])
    _sent(message, accepted)
    return None


def _sent(message: Message, accepted: providers.Accepted) -> None:
    """Record the provider's acceptance and emit message.sent, in one transaction."""
    message.external_uuid = accepted.external_uuid
    with write_transaction():
        run_sql(SENT_SQL, {"id": message.id, "external": accepted.external_uuid,
                           "header": accepted.message_id_header})
        emit(message.tenant_id, "message.sent", message_dto(message))


def _failed(message: Message, reason: str, delays: list[float]) -> float | None:
    """Schedule a retry while the table of delays lasts, else record the permanent failure."""
    message.delivery_attempts += 1
    message.delivery_error = reason
    message.claimed_until = None
    retry = message.delivery_attempts - 1 < len(delays)
    if retry:
        delay = delays[message.delivery_attempts - 1]
        message.delivery_status = "queued"
        message.next_attempt_at = clock.now() + timedelta(seconds=delay)
    else:
        message.delivery_status = "failed"
        log.error("message %s to %s failed permanently after %d attempts: %s", message.id,
                  message.channel, message.delivery_attempts, reason)
    with write_transaction():
        message.save()
    return delay if retry else None


def due_message_ids(limit: int = 500) -> list[int]:
    """Queued messages whose time has come, and sends whose claim ran out (for the sweep)."""
    now = clock.now()
    rows = (Message.select(Message.id)
            .where(((Message.delivery_status == "queued") & (Message.next_attempt_at <= now))
                   | ((Message.delivery_status == "sending") & (Message.claimed_until < now)))
            .order_by(Message.next_attempt_at).limit(limit))
    return [row.id for row in rows]

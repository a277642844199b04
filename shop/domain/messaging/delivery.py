"""Outbound message delivery, run by the consumer: claim, hand to the provider, record, retry."""

import logging
import time
from datetime import timedelta

from shop import clock
from shop.db import backend, named_sql, run_sql, run_together, write_sql, write_transaction
from shop.domain.appointments import reminders
from shop.domain.events.outbox import emit
from shop.domain.messaging import addresses, providers, receipts, suppressions
from shop.domain.messaging.conversations import MESSAGE
from shop.models import Message
from shop.platform import metrics

log = logging.getLogger("shop.messages")
CLAIM_SECONDS = 300  # a send that takes longer is presumed dead and may be claimed again


def claim_seconds(config) -> float:
    return float(config.get("SEND_CLAIM_SECONDS", CLAIM_SECONDS))


def retry_delays(config) -> list[float]:
    """Seconds to wait before each retry of a transient failure."""
    return [float(x) for x in str(config["SEND_RETRY_DELAYS"]).split(",") if x.strip()]


# a job whose own message is due also takes up to BATCH - 1 others already due, sends them on
# its connection and records them in one transaction (docs/performance.md, Messaging); it takes
# no more once it has worked BATCH_SECONDS or a quarter of the claim, well inside the claim
BATCH = 10
BATCH_SECONDS = 30
DUE = (
    "((delivery_status = 'queued' AND next_attempt_at <= :now) "
    "OR (delivery_status = 'sending' AND claimed_until < :now))"
)
IS_DUE_SQL = named_sql(f"SELECT id FROM message WHERE id = :id AND direction = 'outbound' AND {DUE}")


_OTHERS_DUE = (
    "SELECT id FROM message WHERE delivery_status = 'queued' AND next_attempt_at <= :now "
    "AND direction = 'outbound' ORDER BY next_attempt_at, id LIMIT :others"
)
_TAKE = "UPDATE message SET delivery_status = 'sending', claimed_until = :until"
_OWN = f"own AS MATERIALIZED ({IS_DUE_SQL} FOR UPDATE SKIP LOCKED)"  # the given message, if due and free
# one statement: what it finds due is what it takes; the outer condition re-checks each row as it
# is written, so a row another claim took meanwhile is left alone. On PostgreSQL the candidates are
# locked once, up front (FOR UPDATE SKIP LOCKED, materialized so the limit holds): a row another
# claim holds is passed over, so two claims never wait on each other or deadlock
CLAIM_SQL = {
    "sqlite": named_sql(
        f"{_TAKE} WHERE id IN ({IS_DUE_SQL} UNION ALL SELECT id FROM ({_OTHERS_DUE}) AS due) "
        f"AND {DUE} RETURNING {Message.columns()}"
    ),
    "postgres": named_sql(
        f"WITH {_OWN}, due AS MATERIALIZED ({_OTHERS_DUE} FOR UPDATE SKIP LOCKED) "
        f"{_TAKE} WHERE id IN (SELECT id FROM own UNION ALL SELECT id FROM due) "
        f"AND {DUE} RETURNING {Message.columns()}"
    ),
}
# `sent` (or `logged`) only from where a send leaves it: a provider's receipt that came first
# (delivered, failed) is not moved back
SENT_SQL = named_sql(
    "UPDATE message SET delivery_status = CASE WHEN delivery_status IN ('queued', 'sending') "
    "THEN :status ELSE delivery_status END, claimed_until = NULL, delivery_error = CASE WHEN "
    "delivery_status IN ('queued', 'sending') THEN NULL ELSE delivery_error END, "
    "external_uuid = :external, message_id_header = COALESCE(:header, message_id_header), "
    "delivery_attempts = delivery_attempts + 1 WHERE id = :id"
)
# one given message, if it is still due: a row another claim took meanwhile is left to it; on
# PostgreSQL a row another transaction holds (a claim, a cancel stopping it) is passed over, not
# waited for, as CLAIM_SQL does: no wait, no deadlock with a cancel locking the same messages
TAKE_SQL = {
    "sqlite": named_sql(f"{_TAKE} WHERE id = :id AND {DUE} RETURNING {Message.columns()}"),
    "postgres": named_sql(
        f"WITH {_OWN} {_TAKE} WHERE id IN (SELECT id FROM own) AND {DUE} RETURNING {Message.columns()}"
    ),
}
RELEASE_SQL = named_sql(
    "UPDATE message SET delivery_status = 'queued', claimed_until = NULL WHERE id = :id "
    "AND delivery_status = 'sending'"
)


def claim(message_id: int, seconds: float = CLAIM_SECONDS) -> list[Message]:
    """This message, then others already due (oldest first), taken for sending; [] when this one
    is not due (sent, or another job has it): its job then leaves the others to their own jobs."""
    now = clock.now()
    if not run_sql(IS_DUE_SQL, {"id": message_id, "now": now}):
        return []
    rows = write_sql(
        CLAIM_SQL[backend()],
        {"id": message_id, "now": now, "others": BATCH - 1, "until": now + timedelta(seconds=seconds)},
    )
    return sorted(
        (Message.from_row(row) for row in rows), key=lambda m: (m.id != message_id, m.next_attempt_at, m.id)
    )


def claim_these(message_ids: list[int], seconds: float = CLAIM_SECONDS) -> list[Message]:
    """These messages, those of them still due, taken for sending in one transaction: a job that
    queued them delivers them itself, and each is taken here, or by the claim that came first, or
    is held by a cancel stopping it (if that rolls back, the message sweep takes it)."""
    if not message_ids:
        return []
    now = clock.now()
    params = {"now": now, "until": now + timedelta(seconds=seconds)}
    with write_transaction():
        take = TAKE_SQL[backend()]
        found = run_together(*((take, {**params, "id": message_id}) for message_id in message_ids))
    return [Message.from_row(row) for rows in found for row in rows]


def attempt(message_id: int, config) -> list[tuple[int, float]]:
    """Deliver a message (and the due ones claimed with it); (id, delay) of each to try again."""
    held = claim_seconds(config)
    return _deliver_claimed(claim(message_id, held), held, config)


def attempt_these(message_ids: list[int], config) -> list[tuple[int, float]]:
    """Deliver these messages (those no other job took first); (id, delay) of each to try again."""
    held = claim_seconds(config)
    return _deliver_claimed(claim_these(message_ids, held), held, config)


def _deliver_claimed(claimed: list[Message], held: float, config) -> list[tuple[int, float]]:
    """Hand the claimed messages to their providers in order and record them (see attempt)."""
    started, give_up = time.monotonic(), min(BATCH_SECONDS, held / 4)
    sent, again = [], []
    try:
        for i, message in enumerate(claimed):
            if i and time.monotonic() - started > give_up:  # its own message is always tried
                again += _release(claimed[i:])
                break
            began = time.perf_counter()
            try:
                sent.append((message, _deliver(message, config)))
                log_send(message, "sent", began)
            except providers.PermanentFailure as error:
                _failed(message, str(error), [], opted_out=isinstance(error, providers.OptedOut))
                log_send(message, "failed", began, str(error))
            except providers.TransientFailure as error:
                delay = _failed(message, str(error), retry_delays(config))
                again += [(message.id, delay)] if delay is not None else []
                log_send(message, "retrying" if delay is not None else "failed", began, str(error))
    finally:  # whatever broke the batch, what the provider accepted is recorded
        _sent(sent)
    return again


def log_send(message: Message, outcome: str, began: float, error: str | None = None) -> None:
    """One line per send (logger shop.messages): ids, outcome, duration, error; never the body
    or the recipient's address."""
    fields = {
        "event": "message_send",
        "message_id": message.id,
        "tenant": message.tenant_id,
        "channel": message.channel,
        "attempt": message.delivery_attempts + (1 if outcome == "sent" else 0),
        "outcome": outcome,
        "duration_ms": round((time.perf_counter() - began) * 1000, 1),
        "error": error,
    }
    log.log(
        logging.INFO if outcome == "sent" else logging.WARNING,
        "message %s (%s) send: %s (%sms)%s",
        message.id,
        message.channel,
        outcome,
        fields["duration_ms"],
        f": {error}" if error else "",
        extra={"fields": fields},
    )


def _deliver(message: Message, config) -> providers.Accepted:
    """Hand one message to its provider; anything unforeseen counts as a transient failure."""
    outgoing = providers.Outgoing(
        channel=message.channel,
        recipient=message.recipient,
        body=message.body,
        subject=message.subject,
        sender=message.sender,
        in_reply_to=message.in_reply_to,
        reference=str(message.id),
        reply_to=addresses.reply_address(config, message.conversation_id)
        if message.channel == "email"
        else None,
        envelope_sender=addresses.bounce_address(config, message.id) if message.channel == "email" else None,
    )
    try:
        return providers.deliver(outgoing, config)
    except (providers.TransientFailure, providers.PermanentFailure):
        raise
    except Exception as error:
        log.exception("message %s: unexpected error from the %s provider", message.id, message.channel)
        raise providers.TransientFailure(f"unexpected error: {type(error).__name__}") from None


def _sent(sent: list[tuple[Message, providers.Accepted]]) -> None:
    """Record the provider's acceptances and emit message.sent for each, in one transaction."""
    if not sent:
        return
    with write_transaction():
        for message, accepted in sent:
            message.external_uuid = accepted.external_uuid
            message.delivery_status = "logged" if accepted.logged else "sent"
            run_sql(
                SENT_SQL,
                {
                    "id": message.id,
                    "external": accepted.external_uuid,
                    "header": accepted.message_id_header,
                    "status": "logged" if accepted.logged else "sent",
                },
            )
            emit(message.tenant_id, "message.sent", MESSAGE.dump(message))
    for message, _ in sent:
        metrics.message_finished(message.channel, "sent")


def _release(messages: list[Message]) -> list[tuple[int, float]]:
    """Give back claimed messages this job had no time for; their next job starts at once."""
    with write_transaction():
        for message in messages:
            run_sql(RELEASE_SQL, {"id": message.id})
    return [(message.id, 0.0) for message in messages]


def _failed(message: Message, reason: str, delays: list[float], opted_out: bool = False) -> float | None:
    """Schedule a retry while the table of delays lasts, else record the permanent failure; a
    provider that refused because the recipient opted out has the address suppressed."""
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
        log.error(
            "message %s to %s failed permanently after %d attempts: %s",
            message.id,
            message.channel,
            message.delivery_attempts,
            reason,
        )
    with write_transaction():
        message.save()
        if not retry:  # the provider refused it for good: a reminder that queued it has failed with
            # it, and the inbox says so, as for a receipt
            reminders.message_failed(message.id)
            receipts.notify_failed(message)
        if opted_out:  # as the provider's receipt with its opt-out code does
            suppressions.suppress(message.tenant_id, message.channel, message.recipient, "provider_opt_out")
    metrics.message_finished(message.channel, "retry" if retry else "failed")
    return delay if retry else None


def due_message_ids(limit: int = 500) -> list[int]:
    """Queued messages whose time has come, and sends whose claim ran out (for the sweep)."""
    now = clock.now()
    rows = (
        Message.select(Message.id)
        .where(
            ((Message.delivery_status == "queued") & (Message.next_attempt_at <= now))
            | ((Message.delivery_status == "sending") & (Message.claimed_until < now))
        )
        .order_by(Message.next_attempt_at)
        .limit(limit)
    )
    return [row.id for row in rows]

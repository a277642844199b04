"""Inbound email: a raw RFC 5322 message (posted by a relay, or taken by `shop mail-in`) parsed into
one InboundMessage, or a bounce of one of ours; both entries call process()."""

import hashlib
import hmac
import re
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, parseaddr

from flask import current_app, request

from shop.domain.actor import provider
from shop.domain.messaging import inbound, receipts
from shop.domain.messaging.addresses import sign
from shop.inbound.blueprint import bp, enabled_by, limit_body
from shop.models import Conversation, Message, Tenant
from shop.platform.errors import ApiError

ACTOR = provider("email")
MAX_PARTS = 100  # a MIME bomb of nested parts is refused, not walked
MAX_DEPTH = 10
TOKEN = re.compile(r"^(reply|bounces)\+([cm])(\d{1,12})-([0-9a-f]{16})$")
# where a quoted reply begins: "On <date>, <who> wrote:", Outlook's separator, or a block of "> "
QUOTE_START = re.compile(
    r"^(On .{1,200}wrote:\s*$|-{2,} ?Original Message ?-{2,}|From: .+$|_{10,}$)", re.MULTILINE | re.IGNORECASE
)


class Refused(Exception):
    """A message the pipeline does not take: `status` and `code` for HTTP, `smtp` for SMTP."""

    def __init__(self, status: int, code: str, message: str, smtp: str, param: str | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.smtp, self.param = status, code, message, smtp, param

    def api_error(self) -> ApiError:
        return ApiError(self.status, self.code, self.message, param=self.param)


@dataclass(frozen=True)
class Destination:
    """Who an address reaches: a tenant, a conversation (reply+), or one of our messages (bounces+)."""

    tenant_id: str
    conversation_id: int | None = None
    message_id: int | None = None


def destination(address: str, config) -> Destination | None:
    """The tenant (and thread or message) an address reaches, or None: a tenant's inbound_email,
    or a signed reply+/bounces+ address at the inbound domain."""
    address = (parseaddr(address or "")[1] or "").strip().lower()
    local, _, domain = address.rpartition("@")
    token = TOKEN.match(local)
    if token and domain == str(config.get("INBOUND_EMAIL_DOMAIN") or "").lower():
        _, kind, number, _sig = token.groups()
        if not hmac.compare_digest(local.split("+", 1)[1], sign(config["SECRET_KEY"], kind, int(number))):
            return None
        model = Conversation if kind == "c" else Message
        row = model.get_or_none(model.id == int(number))
        if row is None:
            return None
        found = {"conversation_id": row.id} if kind == "c" else {"message_id": row.id}
        return Destination(row.tenant_id, **found)
    tenant = Tenant.get_or_none(Tenant.inbound_email == address) if address else None
    return Destination(tenant.id) if tenant is not None else None


def parse(raw: bytes) -> EmailMessage:
    """The message, or Refused: not parseable, not UTF-8 where it claims nothing else, a bomb."""
    try:
        message = BytesParser(policy=policy.default).parsebytes(raw)
    except Exception:
        raise Refused(
            400, "invalid_email", "The message could not be parsed.", "554 5.6.0 Malformed message"
        ) from None
    parts = list(_walk(message, 0, [0]))
    if not message.keys() or any(_is_broken(part) for part in parts):
        raise Refused(
            400, "invalid_email", "The message is not well-formed MIME.", "554 5.6.0 Malformed message"
        )
    return message


def _walk(part, depth: int, count: list):
    count[0] += 1
    if depth > MAX_DEPTH or count[0] > MAX_PARTS:
        raise Refused(
            400, "invalid_email", "The message nests too many MIME parts.", "554 5.6.0 Too many MIME parts"
        )
    yield part
    if part.is_multipart():
        payload = part.get_payload()
        if not isinstance(payload, list):
            raise Refused(
                400, "invalid_email", "A multipart part has no parts.", "554 5.6.0 Malformed message"
            )
        for child in payload:
            yield from _walk(child, depth + 1, count)


def _is_broken(part) -> bool:
    """A multipart without its boundary, or headers with bytes that are not UTF-8."""
    from email.errors import MultipartInvariantViolationDefect, NoBoundaryInMultipartDefect

    if any(
        isinstance(d, (NoBoundaryInMultipartDefect, MultipartInvariantViolationDefect)) for d in part.defects
    ):
        return True
    try:
        for _name, value in part.items():
            str(value).encode("utf-8")
    except (UnicodeError, ValueError):
        return True
    return False


def text_of(part) -> str:
    """A text part's content in its declared charset (UTF-8 when none is declared), strictly."""
    data = part.get_payload(decode=True) or b""
    charset = part.get_content_charset() or "utf-8"
    try:
        return data.decode(charset)
    except (LookupError, UnicodeDecodeError):
        raise Refused(
            400,
            "invalid_email",
            f"A text part is not valid {charset}.",
            "554 5.6.0 Text is not in its charset",
        ) from None


def body_and_attachments(message: EmailMessage) -> tuple[str, list[dict]]:
    """The text part (else the HTML turned to text), and every attachment as metadata."""
    attachments = []
    for part in message.walk():
        if part.is_multipart():
            continue
        if part.is_attachment() or part.get_content_maintype() not in ("text",):
            data = part.get_payload(decode=True) or b""
            attachments.append(
                {"filename": part.get_filename(), "content_type": part.get_content_type(), "size": len(data)}
            )
    text = message.get_body(preferencelist=("plain",))
    if text is not None:
        return text_of(text), attachments
    html = message.get_body(preferencelist=("html",))
    return (html_to_text(text_of(html)) if html is not None else ""), attachments


def html_to_text(html: str) -> str:
    """HTML as plain text: tags dropped, breaks and paragraphs as new lines, entities decoded."""
    from html import unescape

    html = re.sub(r"(?is)<(script|style).*?</\1>", "", html)
    html = re.sub(r"(?i)<br\s*/?>|</p>|</div>|</li>", "\n", html)
    return unescape(re.sub(r"<[^>]+>", "", html)).strip()


def trim_quoted(text: str) -> str:
    """The reply without the quoted message below it (the full text is kept beside it)."""
    match = QUOTE_START.search(text)
    head = text[: match.start()] if match else text
    lines = head.rstrip().splitlines()
    while lines and lines[-1].startswith(">"):
        lines.pop()
    return "\n".join(lines).strip() or text.strip()


def is_bounce(message: EmailMessage) -> bool:
    return (
        message.get_content_type() == "multipart/report"
        and (message.get_param("report-type") or "").lower() == "delivery-status"
    )


def bounce_details(message: EmailMessage) -> tuple[str | None, str | None, str | None]:
    """(original Message-ID, Status, Final-Recipient) of a delivery status notification."""
    original, status, recipient = None, None, None
    for part in message.walk():
        kind = part.get_content_type()
        if kind == "message/delivery-status":
            text = part.as_string()
            found = re.search(r"(?im)^Status:\s*([245]\.\d{1,3}\.\d{1,3})", text)
            status = found.group(1) if found else status
            final = re.search(r"(?im)^Final-Recipient:\s*[^;]*;\s*(\S+)", text)
            recipient = final.group(1) if final else recipient
        elif kind in ("message/rfc822", "text/rfc822-headers"):
            quoted = re.search(r"(?im)^Message-ID:\s*(<[^>]+>)", part.as_string())
            original = quoted.group(1) if quoted else original
    return original, status, recipient


def process(raw: bytes, recipient: str | None, config) -> dict:
    """Take one raw message for `recipient` (else its Delivered-To, X-Original-To, To): the
    inbound_receipt, or Refused."""
    message = parse(raw)
    where = _destination(message, recipient, config)
    if is_bounce(message):
        original, status, final = bounce_details(message)
        receipts.record_bounce(where.tenant_id, where.message_id, original, status, final, ACTOR)
        return {
            "object": "inbound_receipt",
            "message_id": None,
            "duplicate": False,
            "reply": None,
            "bounce": True,
        }
    if (message.get("Auto-Submitted") or "no").strip().lower() != "no":
        raise Refused(
            422,
            "unprocessable",
            "Automatic replies are not taken (Auto-Submitted).",
            "550 5.7.1 Auto-submitted mail refused",
        )
    message_id = (message.get("Message-ID") or "").strip()
    if message_id and Message.get_or_none(
        (Message.message_id_header == message_id) & (Message.direction == "outbound")
    ):
        raise Refused(
            422, "unprocessable", "This is a message of ours coming back (a loop).", "550 5.7.1 Mail loop"
        )
    received = inbound.receive(_inbound(message, raw, where), ACTOR)
    return {
        "object": "inbound_receipt",
        "message_id": received.message_id,
        "duplicate": received.duplicate,
        "reply": None,
    }


def _destination(message: EmailMessage, recipient: str | None, config) -> Destination:
    candidates = (
        [recipient]
        if recipient
        else [
            value
            for name in ("Delivered-To", "X-Original-To", "To")
            for _, value in getaddresses(message.get_all(name) or [])
        ]
    )
    for address in candidates:
        found = destination(address, config)
        if found is not None:
            return found
    raise Refused(
        404, "not_found", "No shop takes mail at this address.", "550 5.1.1 No such recipient", "recipient"
    )


def _inbound(message: EmailMessage, raw: bytes, where: Destination) -> inbound.InboundMessage:
    text, attachments = body_and_attachments(message)
    sender = parseaddr(str(message.get("From") or ""))[1].lower()
    if not sender:
        raise Refused(400, "invalid_email", "The message has no From address.", "554 5.6.0 No From", "from")
    message_id = (message.get("Message-ID") or "").strip() or "<sha256-" + hashlib.sha256(
        raw
    ).hexdigest() + ">"
    in_reply_to = (message.get("In-Reply-To") or "").strip() or None
    conversation_id = where.conversation_id or _thread_of(where.tenant_id, message)
    return inbound.InboundMessage(
        "email",
        message_id[:998],
        sender[:320],
        "",
        trim_quoted(text)[: inbound.BODY_LIMIT],
        subject=str(message.get("Subject") or "")[:998] or None,
        attachments=tuple(attachments),
        in_reply_to=in_reply_to[:998] if in_reply_to else None,
        conversation_id=conversation_id,
        tenant_id=where.tenant_id,
        full_text=text[: inbound.BODY_LIMIT],
    )


def _thread_of(tenant_id: str, message: EmailMessage) -> int | None:
    """The conversation of our outbound mail this one answers (In-Reply-To, then References)."""
    ids = re.findall(
        r"<[^<>\s]+>", " ".join(str(message.get(h) or "") for h in ("In-Reply-To", "References"))
    )
    for header in ids[:50]:
        ours = (
            Message.for_tenant(tenant_id)
            .where((Message.message_id_header == header) & (Message.direction == "outbound"))
            .first()
        )
        if ours is not None:
            return ours.conversation_id
    return None


@bp.route("/email", methods=["POST"])
@enabled_by("INBOUND_EMAIL_TOKEN")
def email_in():
    """A raw message (Content-Type message/rfc822) from a relay, with the bearer token."""
    given = request.headers.get("Authorization", "")
    if not given.startswith("Bearer ") or not given[7:].strip():
        raise ApiError(401, "unauthorized", "Missing bearer token.", headers={"WWW-Authenticate": "Bearer"})
    if not hmac.compare_digest(given[7:].strip(), str(current_app.config["INBOUND_EMAIL_TOKEN"])):
        raise ApiError(403, "forbidden", "Invalid bearer token.")
    if request.mimetype != "message/rfc822":
        raise ApiError(415, "unsupported_media_type", "This route takes message/rfc822 bodies.")
    raw = limit_body(int(current_app.config["INBOUND_MAX_BYTES"]))
    try:
        return process(raw, request.args.get("recipient"), current_app.config)
    except Refused as refused:
        raise refused.api_error() from None

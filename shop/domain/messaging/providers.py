"""Message providers: SMTP for email, an HTTP gateway or Twilio for SMS, and a log provider for demos."""

import logging
import secrets
import smtplib
import ssl
import threading
import time
from dataclasses import dataclass
from email import policy
from email.header import Header
from email.mime.text import MIMEText
from email.utils import formataddr, formatdate, make_msgid, parseaddr
from urllib.parse import quote, unquote, urlsplit

import requests

from shop.config import sms_provider

log = logging.getLogger("shop.providers")


class TransientFailure(Exception):
    """The provider may accept a retry (connection trouble, 4xx SMTP replies, 5xx/429 HTTP)."""


class PermanentFailure(Exception):
    """The provider refused the message for good (5xx SMTP replies, 4xx HTTP)."""


class OptedOut(PermanentFailure):
    """The provider refused the message because the recipient opted out with it (Twilio's 21610):
    the number is suppressed as by the provider's receipt."""


@dataclass(frozen=True)
class Outgoing:
    channel: str
    recipient: str
    body: str
    subject: str | None = None
    sender: str | None = None
    in_reply_to: str | None = None
    reference: str | None = None  # our message id, for the gateway's records
    reply_to: str | None = None  # email: reply+<token>@ the inbound domain (replies thread back)
    envelope_sender: str | None = None  # email: bounces+<token>@ the inbound domain (VERP)


@dataclass(frozen=True)
class Accepted:
    external_uuid: str
    message_id_header: str | None = None
    logged: bool = False  # the log provider's: nothing left the machine (delivery_status `logged`)


# one open SMTP connection per worker thread, reused while it is fresh: a handshake (and TLS and
# login, against a real server) per message costs more than the message
_connections = threading.local()
IDLE_SECONDS = 30


def send_email_smtp(url: str, message: Outgoing, timeout: float = 30) -> Accepted:
    """Hand an email to the SMTP server of `smtp://user:pass@host:port` (smtps:// for TLS)."""
    parts = urlsplit(url)
    domain = parts.hostname or "localhost"
    mime = _mime(message, domain)
    sender = message.envelope_sender or parseaddr(message.sender or "")[1] or f"repair-shop@{domain}"
    for attempt in (1, 2):
        client, reused = _connection(url, parts, timeout)
        try:
            _hand_over(client, mime, sender, parseaddr(message.recipient)[1])
            _connections.used_at = time.monotonic()
            return Accepted(
                external_uuid=mime["Message-ID"].strip("<>"), message_id_header=mime["Message-ID"]
            )
        except smtplib.SMTPRecipientsRefused as error:
            codes = [code for code, _ in error.recipients.values()]
            raise (TransientFailure if all(400 <= c < 500 for c in codes) else PermanentFailure)(
                f"recipient refused: {codes}"
            ) from None
        except smtplib.SMTPResponseException as error:
            kind = TransientFailure if 400 <= error.smtp_code < 500 else PermanentFailure
            raise kind(f"SMTP {error.smtp_code}") from None
        except (OSError, smtplib.SMTPException) as error:
            _drop_connection()
            if not (reused and attempt == 1):  # a reused connection may just have gone stale
                raise TransientFailure(f"SMTP connection: {type(error).__name__}") from None
    raise TransientFailure("SMTP connection: retries exhausted")


# SMTPUTF8 writes headers as UTF-8 and must not refold what is already right: a long
# In-Reply-To folded into an encoded-word would no longer thread the reply
UTF8_POLICY = policy.SMTPUTF8.clone(refold_source="none")


def _hand_over(client: smtplib.SMTP, mime: MIMEText, sender: str, recipient: str) -> None:
    """Send one message from the envelope `sender` (the VERP address when there is one); an address
    beyond ASCII needs the server's SMTPUTF8 (RFC 6531). The message is flattened once, as
    `send_message` would, without its re-reading of the addresses from the headers."""
    if (sender + recipient).isascii():  # a display name beyond ASCII is encoded in its header
        client.sendmail(sender, [recipient], mime.as_bytes(policy=WIRE_POLICY))
        return
    client.ehlo_or_helo_if_needed()
    if not client.has_extn("smtputf8"):
        raise PermanentFailure("the address is not ASCII and the SMTP server does not offer SMTPUTF8")
    if isinstance(mime["Subject"], Header):  # an SMTPUTF8 message carries its headers as UTF-8
        mime.replace_header("Subject", str(mime["Subject"]))
    client.sendmail(
        sender, [recipient], mime.as_bytes(policy=UTF8_POLICY), mail_options=["SMTPUTF8", "BODY=8BITMIME"]
    )


def _connection(url: str, parts, timeout: float) -> tuple[smtplib.SMTP, bool]:
    """This thread's connection to `url`, reused while fresh, else a new one."""
    client = getattr(_connections, "client", None)
    fresh = time.monotonic() - getattr(_connections, "used_at", 0) < IDLE_SECONDS
    if client is not None and _connections.url == url and fresh:
        return client, True
    _drop_connection()
    try:
        client = _connect(parts, timeout)
        if parts.scheme == "smtp" and "starttls=true" in (parts.query or ""):
            client.starttls(context=ssl.create_default_context())
        if parts.username:
            client.login(unquote(parts.username), unquote(parts.password or ""))
    except smtplib.SMTPAuthenticationError as error:
        raise PermanentFailure(f"SMTP login refused: {error.smtp_code}") from None
    except (OSError, smtplib.SMTPException) as error:
        raise TransientFailure(f"SMTP connection: {type(error).__name__}") from None
    _connections.client, _connections.url, _connections.used_at = client, url, time.monotonic()
    return client, False


def _connect(parts, timeout: float) -> smtplib.SMTP:
    if parts.scheme == "smtps":
        return smtplib.SMTP_SSL(
            parts.hostname, parts.port or 465, timeout=timeout, context=ssl.create_default_context()
        )
    return smtplib.SMTP(parts.hostname, parts.port or 25, timeout=timeout)


def _drop_connection() -> None:
    client = getattr(_connections, "client", None)
    _connections.client = None
    if client is not None:
        try:
            client.quit()
        except (OSError, smtplib.SMTPException):
            client.close()


class HeaderPolicy(policy.Compat32):
    """The classic policy (the fast path) that refuses a header value with an embedded line break,
    as the standard library's EmailPolicy does: under the API's own refusal, the last guard against
    a value that would become a header of its own (CVE-2024-6923 is unfixed in Python 3.11.7)."""

    def header_store_parse(self, name, value):
        text = str(value)
        if "".join(text.splitlines()) != text:
            raise ValueError(f"the {name} header may not contain a line break")
        return super().header_store_parse(name, value)

    def _fold(self, name, value, sanitize):
        """A header that fits its line in printable ASCII is written as it is: the same as the
        classic folding makes of it (an email.header.Header per header, most of a flattening's
        time; tests/domain/messaging/test_email_headers.py compares the two)."""
        if (
            isinstance(value, str)
            and value.isascii()
            and value.replace("\t", " ").isprintable()
            and len(name) + 2 + len(value) <= (self.max_line_length or 0)
        ):
            return f"{name}: {value}{self.linesep}"
        return super()._fold(name, value, sanitize)


HEADER_POLICY = HeaderPolicy()
WIRE_POLICY = HEADER_POLICY.clone(linesep="\r\n")  # SMTP's line ends, as send_message writes


def _mime(message: Outgoing, domain: str) -> MIMEText:
    """A text/plain UTF-8 email. The classic MIMEText builds and serialises in about a fifth of
    EmailMessage's time (docs/performance.md), and a consumer sends many of them. A header value
    with a line break (a message stored before the API refused one) fails for good."""
    mime = MIMEText(message.body, "plain", "utf-8", policy=HEADER_POLICY)
    try:
        mime["From"] = _address(message.sender or f"repair-shop@{domain}")
        mime["To"] = message.recipient
        mime["Subject"] = _header(message.subject or "")
    except ValueError as error:
        raise PermanentFailure(str(error)) from None
    mime["Date"] = formatdate(usegmt=True)
    mime["Message-ID"] = make_msgid(domain=domain)
    if message.reply_to:
        mime["Reply-To"] = message.reply_to
    if message.in_reply_to:
        mime["In-Reply-To"] = message.in_reply_to
        mime["References"] = message.in_reply_to
    return mime


def _address(value: str) -> str:
    """`Name <addr>` with a name beyond ASCII RFC 2047-encoded (the SMTP_FROM of a Café)."""
    if value.isascii():
        return value
    name, address = parseaddr(value)
    return formataddr((name, address), "utf-8") if name and not name.isascii() else value


def _header(text: str):
    """ASCII as is; anything else RFC 2047-encoded."""
    return text if text.isascii() else Header(text, "utf-8")


def send_sms_gateway(url: str, message: Outgoing, timeout: float = 10) -> Accepted:
    """POST {to, body, from, reference} as JSON; the gateway answers 2xx with its message id."""
    payload = {
        "to": message.recipient,
        "body": message.body,
        "from": message.sender,
        "reference": message.reference,
    }
    try:
        response = requests.post(url, json=payload, timeout=timeout, allow_redirects=False)
    except requests.RequestException as error:
        raise TransientFailure(f"SMS gateway unreachable: {type(error).__name__}") from None
    if response.status_code == 429 or response.status_code >= 500:
        raise TransientFailure(f"SMS gateway answered {response.status_code}")
    if not 200 <= response.status_code < 300:
        raise PermanentFailure(f"SMS gateway refused the message: {response.status_code}")
    try:
        answer = response.json()
        external = next(str(answer[k]) for k in ("id", "message_id", "sid") if answer.get(k))
    except (ValueError, TypeError, AttributeError, StopIteration):
        raise TransientFailure("SMS gateway answered without a message id") from None
    return Accepted(external_uuid=external[:255])


TWILIO_OPTED_OUT = "21610"  # Twilio: "Attempt to send to unsubscribed recipient"
TWILIO_STATUS_PATH = "/inbound/sms/twilio/status"


@dataclass(frozen=True)
class TwilioAccount:
    api_url: str
    sid: str
    auth_token: str
    status_callback: str | None = None  # where Twilio posts the message's status (signed)

    def __repr__(self) -> str:  # never the auth token, should an account end up in a traceback
        return f"TwilioAccount(api_url={self.api_url!r}, sid={self.sid!r})"


def twilio_account(config) -> TwilioAccount:
    """The account of SHOP_TWILIO_*; status callbacks go to SHOP_PUBLIC_URL when it is set."""
    public = config.get("PUBLIC_URL")
    return TwilioAccount(
        api_url=str(config.get("TWILIO_API_URL") or "https://api.twilio.com").rstrip("/"),
        sid=str(config["TWILIO_ACCOUNT_SID"]),
        auth_token=str(config["TWILIO_AUTH_TOKEN"]),
        status_callback=str(public).rstrip("/") + TWILIO_STATUS_PATH if public else None,
    )


def send_sms_twilio(account: TwilioAccount, message: Outgoing, timeout: float = 10) -> Accepted:
    """POST To, From, Body (and StatusCallback) form-encoded to Twilio's Messages resource with
    basic auth; Twilio answers 201 with the message's `sid`, which its status callbacks name."""
    if not message.sender:
        raise PermanentFailure("no From number for Twilio: give the shop sms_numbers or set SHOP_SMS_FROM")
    form = {"To": message.recipient, "From": message.sender, "Body": message.body}
    if account.status_callback:
        form["StatusCallback"] = account.status_callback
    url = f"{account.api_url}/2010-04-01/Accounts/{quote(account.sid, safe='')}/Messages.json"
    try:
        response = requests.post(
            url, data=form, auth=(account.sid, account.auth_token), timeout=timeout, allow_redirects=False
        )
    except requests.RequestException as error:
        raise TransientFailure(f"Twilio unreachable: {type(error).__name__}") from None
    if not 200 <= response.status_code < 300:
        raise twilio_refusal(response)
    try:
        sid = str(response.json()["sid"])
    except (ValueError, TypeError, KeyError):
        raise TransientFailure("Twilio answered without a message sid") from None
    return Accepted(external_uuid=sid[:255])


def twilio_refusal(response: requests.Response) -> Exception:
    """Twilio's error answer (JSON `{code, message, more_info, status}`) as our failure: 429 and
    5xx transient, any other answer permanent, 21610 an opt-out. Twilio's `message` is left out:
    it may quote the recipient's number, and the error is logged and shown."""
    try:
        answer = response.json()
        code, more = answer.get("code"), answer.get("more_info")
    except (ValueError, AttributeError):
        code, more = None, None
    said = f"Twilio answered {response.status_code}"
    if isinstance(code, (int, str)) and str(code).isdigit():
        said += f", error {code}"
    if isinstance(more, str) and more.startswith("https://") and len(more) <= 200:
        said += f" ({more})"
    if response.status_code == 429 or response.status_code >= 500:
        return TransientFailure(said)
    if str(code) == TWILIO_OPTED_OUT:
        return OptedOut(f"{said}: the recipient opted out")
    if response.status_code in (401, 403):
        return PermanentFailure(f"{said}: check SHOP_TWILIO_ACCOUNT_SID and SHOP_TWILIO_AUTH_TOKEN")
    return PermanentFailure(said)


def send_logged(message: Outgoing) -> Accepted:
    """The demo provider: logs that it would send (our message id, never the recipient or the
    text: no personal data in logs), and accepts."""
    log.info("log provider: %s message %s (%d chars)", message.channel, message.reference, len(message.body))
    return Accepted(external_uuid="log_" + secrets.token_hex(8), logged=True)


def deliver(message: Outgoing, config) -> Accepted:
    """Send through the provider configured for the channel (the log provider when none is)."""
    if message.channel == "email" and config.get("SMTP_URL"):
        return send_email_smtp(config["SMTP_URL"], message)
    if message.channel == "sms":
        provider = sms_provider(config)
        if provider == "gateway":
            return send_sms_gateway(config["SMS_GATEWAY_URL"], message)
        if provider == "twilio":
            return send_sms_twilio(twilio_account(config), message)
    return send_logged(message)

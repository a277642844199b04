"""`shop mail-in`: an SMTP (or LMTP) listener on aiosmtpd feeding the inbound email pipeline.

Unknown recipients are refused at RCPT time (550), a message over SHOP_INBOUND_MAX_BYTES at DATA
(552, and the SIZE extension announces the limit); each accepted message runs process() once per
recipient in the app's context, as the raw POST does.
"""

import logging

from aiosmtpd.controller import Controller
from aiosmtpd.lmtp import LMTP
from aiosmtpd.smtp import SMTP

from shop.inbound import email

log = logging.getLogger("shop.mail_in")


class Handler:
    """aiosmtpd's handler: RCPT checks the address, DATA runs the pipeline."""

    def __init__(self, app):
        self.app = app

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        with self.app.app_context():
            if email.destination(address, self.app.config) is None:
                return "550 5.1.1 No such recipient here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        raw = envelope.original_content or envelope.content
        if len(raw) > int(self.app.config["INBOUND_MAX_BYTES"]):
            return "552 5.3.4 Message too big"
        answers = [self._one(raw, recipient) for recipient in envelope.rcpt_tos]
        return next((answer for answer in answers if not answer.startswith("250")), "250 OK")

    def _one(self, raw: bytes, recipient: str) -> str:
        with self.app.app_context():
            try:
                email.process(raw, recipient, self.app.config)
                return "250 OK"
            except email.Refused as refused:
                return refused.smtp
            except Exception:
                log.exception("mail-in: the message could not be taken")
                return "451 4.3.0 Temporary failure, try again later"


class LimitedController(Controller):
    """A Controller whose SMTP or LMTP server announces the size limit."""

    def __init__(self, handler, lmtp: bool, max_bytes: int, **kwargs):
        self.lmtp, self.max_bytes = lmtp, max_bytes
        super().__init__(handler, **kwargs)

    def factory(self):
        server = LMTP if self.lmtp else SMTP
        return server(
            self.handler, data_size_limit=self.max_bytes, decode_data=False, hostname="shop-mail-in"
        )


def start(app, host: str, port: int, lmtp: bool = False) -> LimitedController:
    """Start the listener in its own thread (stop() ends it); port 0 picks a free one."""
    controller = LimitedController(
        Handler(app), lmtp, int(app.config["INBOUND_MAX_BYTES"]), hostname=host, port=port
    )
    controller.start()
    return controller

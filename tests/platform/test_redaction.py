"""Secrets are masked in log lines, whoever logs them."""

import logging

from shop.platform.redaction import RedactSecrets, redact


def test_redact_masks_api_tokens_and_signing_secrets():
    text = "key sk_test_acme_token_0001 and sk_live_AbC-123_x secret whsec_Zm9vYmFy done"
    assert redact(text) == "key sk_test_[redacted] and sk_live_[redacted] secret whsec_[redacted] done"


def test_the_filter_masks_arguments_and_tracebacks():
    record = logging.LogRecord("shop", logging.ERROR, __file__, 1, "token %s", ("sk_live_abcdef",), None)
    try:
        raise ValueError("whsec_topsecretvalue")
    except ValueError as error:
        record.exc_info = (type(error), error, error.__traceback__)
    RedactSecrets().filter(record)
    formatted = logging.Formatter().format(record)
    assert "sk_live_abcdef" not in formatted and "whsec_topsecretvalue" not in formatted
    assert "sk_live_[redacted]" in formatted and "whsec_[redacted]" in formatted

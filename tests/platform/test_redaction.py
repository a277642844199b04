"""Secrets are masked in log lines, whoever logs them."""

import logging

import pytest

from shop.platform.redaction import (
    MIGHT_HOLD_A_SECRET,
    RedactSecrets,
    might_hold_a_secret,
    redact,
    redact_value,
    remember,
)


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc.def-ghi", "Authorization: Bearer [redacted]"),
        ("authorization: basic dXNlcjpwYXNz", "authorization: basic [redacted]"),
        ("Service-Signature: t=1700000000,v1=" + "ab" * 32, "Service-Signature: t=1700000000,v1=[redacted]"),
        ("stored fernet:gAAAAABlZ2xvcmVt_aXBzdW0=", "stored fernet:[redacted]"),
        ("smtp://mailer:hunter2@mail.example.com:587", "smtp://mailer:[redacted]@mail.example.com:587"),
        ("postgresql://shop:s3cr%21t@db/shop", "postgresql://shop:[redacted]@db/shop"),
        ("v1=short t=1 plain words", "v1=short t=1 plain words"),
        ("'scrypt:32768:8:1$fUe7sgOC$c64c3ed3', 'owner'", "'scrypt:32768:8:1$[redacted]', 'owner'"),
        ("hash pbkdf2:sha256:600000$Ab$0f1e end", "hash pbkdf2:sha256:600000$[redacted] end"),
        ("['acme', '" + "a0" * 32 + "', 'test']", "['acme', '[redacted-digest]', 'test']"),
        ("req_0123456789abcdef01234567 evt_" + "ab" * 12, "req_0123456789abcdef01234567 evt_" + "ab" * 12),
    ],
    ids=[
        "a bearer token",
        "basic credentials",
        "a webhook signature",
        "a secret's stored form",
        "an SMTP password",
        "a database password",
        "ordinary text is left alone",
        "a teammate's stored password (scrypt)",
        "a teammate's stored password (pbkdf2)",
        "an API key's token hash in a query's parameters",
        "request and event ids are left alone",
    ],
)
def test_redact_masks_every_shape_of_secret(text, expected):
    assert redact(text) == expected


def test_remembered_values_are_masked_wherever_they_appear():
    remember("the-instance-secret-key-0123456789", "short", None, "")
    assert redact("key=the-instance-secret-key-0123456789;") == "key=[redacted];"
    assert redact("a short word") == "a short word"  # too short to remember: it would mask words


def test_the_filter_masks_structured_fields():
    record = logging.LogRecord("shop", logging.INFO, __file__, 1, "attempt", None, None)
    record.fields = {"error": "echoed whsec_abcdefgh", "nested": ["Bearer sk_test_x_1234"], "status": 500}
    RedactSecrets().filter(record)
    assert record.fields["error"] == "echoed whsec_[redacted]"
    assert record.fields["nested"] == ["Bearer [redacted]"] and record.fields["status"] == 500


@pytest.mark.parametrize(
    "text",
    [
        "webhook attempt whatt_0123456789abcdef01234567 #1 of whd_0123456789abcdef01234567: delivered",
        "key SK_LIVE_x",
        "WHSEC_abc",
        "Authorization: BEARER x",
        "BaSiC x",
        "V1=ab",
        "FERNET:x",
        "HTTPS://host",
        "GET /CALENDAR/abc",
        "SCRYPT:1",
        "PBKDF2:sha256",
        "A0" * 32,
        "a0" * 31 + "z",
        "x" + "F" * 64 + "x",
        "Baſic x",  # re's IGNORECASE folds the long s into s
        "ſk_live_x",
        "plain words, café",
        "",
    ],
)
def test_the_quick_test_for_secrets_agrees_with_the_pattern(text):
    assert might_hold_a_secret(text) == (MIGHT_HOLD_A_SECRET.search(text) is not None)


def test_a_dict_of_plain_fields_is_masked_as_each_field_alone():
    remember("known-secret-value-0001")
    clean = {"event": "webhook_attempt", "attempt": 1, "ok": True, "ms": 1.5, "error": None}
    assert redact_value(clean) == clean and redact_value(clean) is not clean
    for secret in ("whsec_abcdef", "Bearer abc", "a" * 64, "x known-secret-value-0001 y", "Baſic abcd"):
        fields = {**clean, "error": secret}
        assert redact_value(fields) == {**clean, "error": redact(secret)} != fields

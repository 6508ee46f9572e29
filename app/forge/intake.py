"""Checks a webhook's payload passes before anything reads it, for any host's intake:
fields of the wrong type, range or length are refused with 400 before the delivery is
recorded. Pure."""

from __future__ import annotations

import re
from typing import Any

from app.errors import ReviewbotError

#: Payloads over this are refused with 413 (GitHub caps its own at 25 MB; GitLab's
#: defaults are far below).
MAX_WEBHOOK_BYTES = 25 * 1024 * 1024
#: Delivery ids are UUIDs (GitHub's delivery, GitLab's event UUID or idempotency key).
DELIVERY_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MAX_ID = 2**63 - 1  # ids are stored as bigint
MAX_NAME = 255  # owner/name, branch names


class WebhookRejected(ReviewbotError):
    """The webhook request was refused."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def bad(field_name: str, expected: str) -> WebhookRejected:
    return WebhookRejected(400, f"payload field {field_name} must be {expected}")


def object_field(payload: dict[str, Any], key: str, where: str = "") -> dict[str, Any]:
    """``payload[key]``, an object ({} when absent); 400 when it is something else."""
    value = payload.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise bad(where + key, "an object")
    return value


def id_field(value: object, field_name: str) -> None:
    if value is not None and not (
        isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_ID
    ):
        raise bad(field_name, "a positive integer below 2^63")


def text_field(value: object, field_name: str, limit: int = MAX_NAME) -> None:
    if value is not None and not (isinstance(value, str) and len(value) <= limit):
        raise bad(field_name, f"a string of at most {limit} characters")

"""How values read on the dashboard's pages (pure; registered as Jinja filters)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

#: Argument names whose values a page never shows.
_SECRET_NAME = re.compile(r"secret|token|password|passwd|key|auth|credential", re.IGNORECASE)
HIDDEN = "[hidden]"


def visible_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """A job's arguments with any that look like a secret replaced by ``[hidden]``."""
    return {k: HIDDEN if _SECRET_NAME.search(k) else v for k, v in args.items()}


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def ago(when: datetime | None, now: datetime | None = None) -> str:
    if when is None:
        return "never"
    seconds = ((now or datetime.now(UTC)) - when).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min ago"
    if seconds < 86400:
        return f"{seconds // 3600:.0f} h ago"
    return f"{seconds // 86400:.0f} d ago"


def dollars(amount: float | None) -> str:
    if amount is None:
        return "unknown"
    return f"${amount:,.2f}" if amount >= 0.01 or amount == 0 else "<$0.01"


def number(value: int | float) -> str:
    return f"{value:,}"


def short_sha(sha: str | None) -> str:
    return (sha or "")[:7] or "—"


FILTERS = {
    "duration": duration,
    "ago": ago,
    "dollars": dollars,
    "number": number,
    "short_sha": short_sha,
    "visible_args": visible_args,
}

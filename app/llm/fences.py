"""Fencing text into a Markdown code block that the text cannot close (prompts carry
code, diffs and questions as data, never as instructions)."""

from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")


def fence_for(*texts: str, shortest: int = 3) -> str:
    """A backtick fence longer than any run of backticks in ``texts`` (at least
    ``shortest`` long)."""
    longest = max((len(run) for text in texts for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(shortest, longest + 1)

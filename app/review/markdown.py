"""Model text made inert before GitHub renders it: no raw HTML, no @mentions.

Code spans and fences are left as written (GitHub shows them literally); outside them a
``<`` that could open a tag becomes ``&lt;``, and ``@name`` gets a zero-width space after
the ``@``, so it reads the same and notifies no one. Pure.
"""

from __future__ import annotations

import re

_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)
_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_MENTION = re.compile(r"(?<![\w.])@(?=[A-Za-z0-9])")


def inert(text: str) -> str:
    """``text`` with raw HTML escaped and mentions broken, outside code."""
    parts = _CODE.split(text)
    for i in range(0, len(parts), 2):  # even parts are outside code
        parts[i] = _MENTION.sub("@\u200b", _TAG.sub("&lt;", parts[i]))
    return "".join(parts)

"""Model text made inert before GitHub renders it: no raw HTML, no @mentions.

Code spans and fences are left as written (GitHub shows them literally); outside them a
``<`` that could open a tag becomes ``&lt;``, and ``@name`` gets a zero-width space after
the ``@``, so it reads the same and notifies no one. ``link_citations`` turns the
model's ``path:line`` citations of known files into links. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)
_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_MENTION = re.compile(r"(?<![\w.])@(?=[A-Za-z0-9])")


def inert(text: str) -> str:
    """``text`` with raw HTML escaped and mentions broken, outside code."""
    parts = _CODE.split(text)
    for i in range(0, len(parts), 2):  # even parts are outside code
        parts[i] = _MENTION.sub("@\u200b", _TAG.sub("&lt;", parts[i]))
    return "".join(parts)


def link_citations(
    text: str, paths: Iterable[str], permalink: Callable[[str, int, int], str]
) -> str:
    """``path:line`` and ``path:start-end`` (bare or in backticks) for a known ``path``
    become links to those lines."""
    known = sorted(set(paths), key=len, reverse=True)
    if not known:
        return text
    names = "|".join(re.escape(p) for p in known)
    cite = re.compile(rf"(`?)(?<![\w/.-])({names}):(\d+)(?:-(\d+))?\1(?![\w/])")

    def link(found: re.Match[str]) -> str:
        path, start = found.group(2), int(found.group(3))
        end = int(found.group(4) or start)
        if end < start:
            return found.group(0)
        shown = f"{path}:{start}" + (f"-{end}" if end != start else "")
        return f"[`{shown}`]({permalink(path, start, end)})"

    return cite.sub(link, text)

"""What people made of the bot's inline comments, and which findings not to raise again.

GitHub sends no webhook for reactions, so when a PR closes the bot reads, for each of its
inline comments (found by the finding marker in their bodies), the 👍 and 👎 people gave
and whether its thread was resolved. A finding is *rejected* when it got a 👎 and no 👍,
*accepted* when it got a 👍 or its thread was resolved without a 👎. A rejected finding
is not raised again in that repository: matched by fingerprint (same file and words) or
by its normalised title (the same point made elsewhere). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from app.review.comments import ReviewComment

_FINDING = re.compile(r"<!-- reviewbot:finding=([0-9a-f]{16}) -->")
_TITLE = re.compile(r"\A\*\*[a-z]+: (.+?)\*\*", re.S)


def finding_marker(fingerprint: str) -> str:
    """The hidden tag an inline comment carries, so feedback finds it later."""
    return f"<!-- reviewbot:finding={fingerprint} -->"


def finding_of(body: str) -> str | None:
    """The fingerprint of the bot's inline comment ``body``; None for anyone else's."""
    found = _FINDING.search(body)
    return found.group(1) if found else None


def findings_in(body: str) -> list[str]:
    """Every finding tag in ``body`` (a review whose comments went into its body)."""
    return _FINDING.findall(body)


def title_of(body: str) -> str:
    """The title of an inline comment as the bot writes it (``**severity: title**``)."""
    found = _TITLE.match(body.strip())
    return found.group(1) if found else ""


def title_key(title: str) -> str:
    """A title reduced to its words: case, digits, punctuation and escapes do not count."""
    title = title.replace("&lt;", "<").replace("\u200b", "")
    return " ".join(re.sub(r"[^a-z]+", " ", title.lower()).split())


def verdict(thumbs_up: int, thumbs_down: int, resolved: bool) -> str:
    """``rejected``, ``accepted`` or ``none``."""
    if thumbs_down and not thumbs_up:
        return "rejected"
    if thumbs_up or resolved:
        return "accepted"
    return "none"


@dataclass(frozen=True)
class Rejected:
    """A repository's rejected findings."""

    fingerprints: frozenset[str] = frozenset()
    titles: frozenset[str] = frozenset()

    def rejects(self, comment: ReviewComment) -> bool:
        key = title_key(comment.title)
        return comment.fingerprint in self.fingerprints or bool(key and key in self.titles)

    @classmethod
    def of(cls, rows: Iterable[tuple[str, str]]) -> Rejected:
        """From (fingerprint, title key) rows."""
        rows = list(rows)
        return cls(frozenset(f for f, _ in rows), frozenset(t for _, t in rows if t))

"""The bot's reviews as the host shows them: each body carries a marker with the head it
reviewed, so a retry, or a CI job with no state of its own, finds what was posted."""

from __future__ import annotations

import re
from collections.abc import Iterable

from app.forge.protocol import RepoHost
from app.review.feedback import finding_of, findings_in


def marker(head_sha: str) -> str:
    return f"<!-- reviewbot:head={head_sha} -->"


MARKER = re.compile(r"<!-- reviewbot:head=([0-9a-f]{40}(?:[0-9a-f]{24})?) -->")


def marked_heads(bodies: Iterable[str]) -> list[str]:
    """The heads the reviews with these bodies reviewed, once each, in order."""
    heads: dict[str, None] = {}
    for body in bodies:
        for head in MARKER.findall(body):
            heads.pop(head, None)
            heads[head] = None
    return list(heads)


def already_posted(api: RepoHost, pr_number: int, head: str) -> tuple[int, list[str]] | None:
    """The review of ``head`` the host already has (its marker), with the fingerprints of
    its findings (its inline comments', or those moved into its body), or None."""
    for review in api.reviews(pr_number):
        body = review.body
        if marker(head) not in body:
            continue
        inline = [
            finding_of(c.body) for c in api.review_comments(pr_number) if c.review_id == review.id
        ]
        return review.id, [f for f in [*inline, *findings_in(body)] if f]
    return None

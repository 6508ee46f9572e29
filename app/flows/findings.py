"""The bot's findings on a pull request as the code host holds them now: its inline comments
(each carries a finding marker), whether their threads are resolved, and what people
reacted. The merge gate counts the open ones; self-resolving threads start from them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from app.forge.models import Reaction, ReviewComment, ReviewThread
from app.forge.protocol import RepoHost
from app.review.feedback import finding_of, title_of, verdict
from app.review.gate import Finding

_SEVERITY = re.compile(r"\A\*\*([a-z]+): ")


@dataclass(frozen=True)
class PostedFinding:
    """One of the bot's inline comments and its thread."""

    comment: ReviewComment
    thread: ReviewThread | None
    replies: list[ReviewComment]  # in the thread after it, oldest first

    @property
    def severity(self) -> str:
        found = _SEVERITY.match(self.comment.body.strip())
        return found.group(1) if found else ""


def posted_findings(api: RepoHost, pr_number: int) -> list[PostedFinding]:
    """The bot's inline findings on the PR, with their threads and replies."""
    comments = api.review_comments(pr_number)
    threads = {t.first_comment: t for t in api.review_threads(pr_number)} if comments else {}
    replies: dict[int, list[ReviewComment]] = {}
    for comment in comments:
        if comment.in_reply_to is not None:
            replies.setdefault(comment.in_reply_to, []).append(comment)
    return [
        PostedFinding(c, threads.get(c.id), replies.get(c.id, []))
        for c in comments
        if c.in_reply_to is None and finding_of(c.body) is not None
    ]


def gate_findings(
    api: RepoHost, pr_number: int, findings: Iterable[PostedFinding], gate_bar: set[str]
) -> list[Finding]:
    """The findings as the gate weighs them; reactions are read only for those at a
    severity the gate counts (``gate_bar``)."""
    weighed = []
    for found in findings:
        body = found.comment.body
        rejected = False
        if found.severity in gate_bar and not (found.thread and found.thread.resolved):
            reactions = api.review_comment_reactions(pr_number, found.comment.id)
            up, down = count_thumbs(reactions)
            rejected = verdict(up, down, False) == "rejected"
        weighed.append(
            Finding(
                found.comment.path,
                found.comment.line,
                found.severity,
                title_of(body),
                resolved=bool(found.thread and found.thread.resolved),
                rejected=rejected,
            )
        )
    return weighed


def count_thumbs(reactions: Iterable[Reaction]) -> tuple[int, int]:
    """(👍, 👎) given by people, not bots."""
    up = down = 0
    for reaction in reactions:
        if reaction.author.bot:
            continue
        if reaction.content == "+1":
            up += 1
        elif reaction.content == "-1":
            down += 1
    return up, down

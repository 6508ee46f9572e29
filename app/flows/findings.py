"""The bot's findings on a pull request as GitHub holds them now: its inline comments
(each carries a finding marker), whether their threads are resolved, and what people
reacted. The merge gate counts the open ones; self-resolving threads start from them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app.github.client import RepoApi, ReviewThread
from app.review.feedback import finding_of, title_of, verdict
from app.review.gate import Finding

_SEVERITY = re.compile(r"\A\*\*([a-z]+): ")


@dataclass(frozen=True)
class PostedFinding:
    """One of the bot's inline comments and its thread."""

    comment: dict[str, Any]  # as GitHub lists it
    thread: ReviewThread | None
    replies: list[dict[str, Any]]  # in the thread after it, oldest first

    @property
    def severity(self) -> str:
        found = _SEVERITY.match((self.comment.get("body") or "").strip())
        return found.group(1) if found else ""


def posted_findings(api: RepoApi, pr_number: int) -> list[PostedFinding]:
    """The bot's inline findings on the PR, with their threads and replies."""
    comments = api.review_comments(pr_number)
    threads = {t.first_comment: t for t in api.review_threads(pr_number)} if comments else {}
    replies: dict[int, list[dict[str, Any]]] = {}
    for comment in comments:
        parent = comment.get("in_reply_to_id")
        if isinstance(parent, int):
            replies.setdefault(parent, []).append(comment)
    return [
        PostedFinding(c, threads.get(int(c["id"])), replies.get(int(c["id"]), []))
        for c in comments
        if "in_reply_to_id" not in c and finding_of(c.get("body") or "") is not None
    ]


def gate_findings(
    api: RepoApi, findings: Iterable[PostedFinding], gate_bar: set[str]
) -> list[Finding]:
    """The findings as the gate weighs them; reactions are read only for those at a
    severity the gate counts (``gate_bar``)."""
    weighed = []
    for found in findings:
        body = found.comment.get("body") or ""
        rejected = False
        if found.severity in gate_bar and not (found.thread and found.thread.resolved):
            reactions = api.review_comment_reactions(int(found.comment["id"]))
            up, down = count_thumbs(reactions)
            rejected = verdict(up, down, False) == "rejected"
        weighed.append(
            Finding(
                str(found.comment.get("path") or ""),
                found.comment.get("line"),
                found.severity,
                title_of(body),
                resolved=bool(found.thread and found.thread.resolved),
                rejected=rejected,
            )
        )
    return weighed


def count_thumbs(reactions: Iterable[dict[str, Any]]) -> tuple[int, int]:
    """(👍, 👎) given by people, not bots."""
    up = down = 0
    for reaction in reactions:
        user = reaction.get("user") or {}
        if user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]"):
            continue
        if reaction.get("content") == "+1":
            up += 1
        elif reaction.get("content") == "-1":
            down += 1
    return up, down

"""What a CI run writes on the pull request, recorded as it is written: posted when the
run posts, only recorded when it prints (a dry run, whose reads still go to the host)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from itertools import count
from typing import Any

from app.forge.models import InlineComment
from app.forge.protocol import RepoHost


@dataclass
class Written:
    """Everything a run wrote (or would have written) on the pull request."""

    reviews: list[dict[str, Any]] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    checks: list[dict[str, str]] = field(default_factory=list)
    descriptions: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "review": self.reviews[-1] if self.reviews else None,
            "comments": self.comments,
            "replies": self.replies,
            "check": self.checks[-1] if self.checks else None,
            "description": self.descriptions[-1] if self.descriptions else None,
            "labels": self.labels,
        }


class Tap:
    """``RepoHost`` over ``api`` whose writes are recorded in ``written``; with ``post``
    False they stop there (ids of their own are answered)."""

    def __init__(self, api: RepoHost, written: Written, post: bool) -> None:
        self.api = api
        self.written = written
        self.post = post
        self._ids = count(1)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    def _send(self, send: Callable[[], int | None]) -> int:
        if not self.post:
            return next(self._ids)
        return send() or 0

    def create_review(
        self, number: int, commit: str, body: str, comments: list[InlineComment]
    ) -> int:
        review_id = self._send(lambda: self.api.create_review(number, commit, body, comments))
        posted = [asdict(c) for c in comments]
        self.written.reviews.append({"commit": commit, "body": body, "comments": posted})
        return review_id

    def comment(self, number: int, body: str) -> int:
        comment_id = self._send(lambda: self.api.comment(number, body))
        self.written.comments.append(body)
        return comment_id

    def reply(self, number: int, comment_id: int, body: str) -> int:
        reply_id = self._send(lambda: self.api.reply(number, comment_id, body))
        self.written.replies.append(body)
        return reply_id

    def react(self, number: int, comment_id: int, content: str) -> None:
        self._send(lambda: self.api.react(number, comment_id, content))

    def start_check(self, number: int, head: str) -> int:
        return self._send(lambda: self.api.start_check(number, head))

    def finish_check(self, check_id: int, conclusion: str, title: str, summary: str) -> None:
        self._send(lambda: self.api.finish_check(check_id, conclusion, title, summary))
        self.written.checks.append({"conclusion": conclusion, "title": title, "summary": summary})

    def resolve_thread(self, number: int, node_id: str) -> None:
        self._send(lambda: self.api.resolve_thread(number, node_id))

    def update_description(self, number: int, body: str) -> None:
        self._send(lambda: self.api.update_description(number, body))
        self.written.descriptions.append(body)

    def add_labels(self, number: int, names: list[str]) -> None:
        self._send(lambda: self.api.add_labels(number, names))
        self.written.labels.extend(names)

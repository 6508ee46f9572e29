"""The calls the workflows make on a code host. ``app/github/`` implements them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import IO, Protocol

from app.errors import ReviewbotError
from app.forge.models import (
    Comment,
    Comparison,
    InlineComment,
    PullRequest,
    Reaction,
    Review,
    ReviewComment,
    ReviewThread,
)
from app.git import LocalRepo


class ForgeError(ReviewbotError):
    """The code host refused or failed a request (``status``: its HTTP status, if any)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class CommentsRefused(ForgeError):
    """The host refused a review's inline comments (a line not in its diff): the review
    can go again with the comments in its body. Nothing of the refused review stays."""


class RepoHost(Protocol):
    """One repository on the host, as one installation of the bot may use it."""

    def pull(self, number: int) -> PullRequest: ...
    def default_branch(self) -> str: ...
    def pull_diff(self, number: int) -> bytes: ...
    def compare_diff(self, base: str, head: str) -> bytes: ...
    def compare(self, base: str, head: str) -> Comparison | None: ...
    def commit_sha(self, ref: str) -> str: ...
    def content(self, path: str, ref: str) -> bytes | None: ...
    def download_tarball(self, ref: str, into: IO[bytes], max_bytes: int) -> int:
        """Stream the archive of ``ref`` into ``into``, never more than ``max_bytes``
        (past it, ``app.indexing.archive.ArchiveTooLarge``); returns the bytes written."""
        ...

    def create_review(
        self, number: int, commit: str, body: str, comments: list[InlineComment]
    ) -> int:
        """Post the review of ``commit``: its body and inline comments, all or none of the
        comments (``CommentsRefused`` when the host refuses one); returns its id."""
        ...

    def start_check(self, number: int, head: str) -> int:
        """A status on pull request ``number``'s ``head`` saying the review is under way
        (a check run, a commit status in the MR's pipeline); its id for ``finish_check``."""
        ...

    def finish_check(self, check_id: int, conclusion: str, title: str, summary: str) -> None:
        """``conclusion``: success | failure | neutral (nothing to block on) | cancelled
        (the review failed: never shown as passing)."""
        ...

    def reviews(self, number: int) -> list[Review]: ...
    def issue_comments(self, number: int) -> list[Comment]: ...
    def comment(self, number: int, body: str) -> int: ...
    def react(self, number: int, comment_id: int, content: str) -> None: ...
    def review_comments(self, number: int) -> list[ReviewComment]: ...
    def review_comment(self, number: int, comment_id: int) -> ReviewComment | None: ...
    def reply(self, number: int, comment_id: int, body: str) -> int: ...
    def review_comment_reactions(self, number: int, comment_id: int) -> list[Reaction]: ...
    def review_threads(self, number: int) -> list[ReviewThread]: ...
    def resolve_thread(self, number: int, node_id: str) -> None: ...
    def update_description(self, number: int, body: str) -> None: ...
    def labels(self) -> list[str]: ...
    def add_labels(self, number: int, names: list[str]) -> None: ...
    def permission(self, user: str) -> str: ...


class CodeHost(Protocol):
    """The host as a whole: its repositories, links to its web pages, its git."""

    def repository(self, installation_id: int, repo: str) -> RepoHost: ...

    def permalinks(self, repo: str, commit: str) -> Callable[[str, int, int], str]:
        """``link(path, start, end)``: lines of a file at ``commit`` on the host's web UI."""
        ...

    def pull_url(self, repo: str, number: int) -> str:
        """The pull (merge) request's page on the host's web UI."""
        ...

    def fetch_history(
        self,
        installation_id: int,
        repo: str,
        branch: str,
        into: Path,
        days: float,
        back_to: datetime | None,
    ) -> tuple[LocalRepo, str]:
        """Fetch ``branch``'s commits of the last ``days`` (or back to ``back_to``) into
        the bare clone at ``into``; returns the clone and the branch's head. ``GitError``
        when git fails, ``ForgeError`` when the host refuses a token."""
        ...

"""What the workflows read from and write to a code host, as frozen records: nothing in
``app/flows`` reads a host's JSON. Field names are the host-neutral meaning; the GitHub
adapter (``app/github/records.py``) maps its JSON onto them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Author:
    login: str
    bot: bool  # a bot account (this one included): never answered, never counted


@dataclass(frozen=True)
class PullRequest:
    number: int
    title: str
    body: str
    head_sha: str
    base_sha: str
    draft: bool
    state: str  # open | closed
    author: str = ""
    labels: tuple[str, ...] = ()
    base_ref: str = ""
    head_ref: str = ""


@dataclass(frozen=True)
class Comment:
    """A comment on a pull request's conversation, not on a line."""

    id: int
    body: str
    author: Author


@dataclass(frozen=True)
class Review:
    """A posted review: its summary body (inline comments are ``ReviewComment``s)."""

    id: int
    body: str


@dataclass(frozen=True)
class ReviewComment:
    """An inline comment on a diff line, or a reply in its thread (``in_reply_to``).

    ``line``/``start_line`` are where it stands on the newest commit (None once the code
    moved away); the ``original_`` ones where it was posted, on ``original_commit``."""

    id: int
    body: str
    author: Author
    path: str = ""
    line: int | None = None
    start_line: int | None = None
    original_line: int | None = None
    original_start_line: int | None = None
    commit: str = ""
    original_commit: str = ""
    in_reply_to: int | None = None
    review_id: int | None = None
    diff_hunk: str = ""

    @property
    def posted_line(self) -> int | None:
        """The (last) line it was posted on."""
        return self.original_line or self.line

    @property
    def posted_start_line(self) -> int | None:
        return self.original_start_line or self.start_line or self.posted_line

    @property
    def posted_commit(self) -> str:
        return self.original_commit or self.commit


@dataclass(frozen=True)
class ReviewThread:
    """A review thread, known by the id of its first comment."""

    node_id: str  # the host's id of the thread, to resolve it
    first_comment: int
    resolved: bool


@dataclass(frozen=True)
class Reaction:
    content: str  # +1 | -1 | eyes | ...
    author: Author


@dataclass(frozen=True)
class ChangedFile:
    path: str
    status: str  # added | removed | modified | renamed | copied | changed | unchanged
    previous_path: str | None = None


@dataclass(frozen=True)
class Comparison:
    """Two commits compared: ``status`` says how ``head`` stands to ``base`` (ahead,
    behind, identical, diverged); ``files`` what changed between them, all of it unless
    ``complete`` is False (the host cuts long lists)."""

    status: str
    files: tuple[ChangedFile, ...]
    complete: bool = True


@dataclass(frozen=True)
class InlineComment:
    """An inline comment to post with a review: on ``line`` (and from ``start_line``,
    for a suggestion over several lines) of the diff's ``side``."""

    path: str
    line: int
    side: str  # RIGHT (the new version) | LEFT
    body: str
    start_line: int | None = None

"""GitHub's JSON as the code host's records (``app/forge/models.py``). Pure."""

from __future__ import annotations

from typing import Any

from app.diff.assemble import file_diff
from app.forge.models import (
    Author,
    ChangedFile,
    Comment,
    Comparison,
    InlineComment,
    PullRequest,
    Reaction,
    Review,
    ReviewComment,
)


def author(data: dict[str, Any]) -> Author:
    """A comment's or reaction's ``user``: bots by account type or the ``[bot]`` suffix."""
    user = data.get("user") or {}
    login = str(user.get("login") or "")
    return Author(login, user.get("type") == "Bot" or login.endswith("[bot]"))


def pull_request(number: int, data: dict[str, Any]) -> PullRequest:
    return PullRequest(
        number=number,
        title=data.get("title") or "",
        body=data.get("body") or "",
        head_sha=data["head"]["sha"],
        base_sha=data["base"]["sha"],
        draft=bool(data.get("draft")),
        state=data.get("state") or "open",
        author=str((data.get("user") or {}).get("login") or ""),
        labels=tuple(str(label.get("name")) for label in data.get("labels") or []),
        base_ref=str(data["base"].get("ref") or ""),
        head_ref=str(data["head"].get("ref") or ""),
    )


def comment(data: dict[str, Any]) -> Comment:
    return Comment(int(data["id"]), str(data.get("body") or ""), author(data))


def review(data: dict[str, Any]) -> Review:
    return Review(int(data["id"]), str(data.get("body") or ""))


def _int(value: object) -> int | None:
    return value if isinstance(value, int) else None


def review_comment(data: dict[str, Any]) -> ReviewComment:
    return ReviewComment(
        id=int(data["id"]),
        body=str(data.get("body") or ""),
        author=author(data),
        path=str(data.get("path") or ""),
        line=_int(data.get("line")),
        start_line=_int(data.get("start_line")),
        original_line=_int(data.get("original_line")),
        original_start_line=_int(data.get("original_start_line")),
        commit=str(data.get("commit_id") or ""),
        original_commit=str(data.get("original_commit_id") or ""),
        in_reply_to=_int(data.get("in_reply_to_id")),
        review_id=_int(data.get("pull_request_review_id")),
        diff_hunk=str(data.get("diff_hunk") or ""),
    )


def reaction(data: dict[str, Any]) -> Reaction:
    return Reaction(str(data.get("content") or ""), author(data))


#: GitHub lists at most this many files in a comparison: a list this long may be cut.
COMPARE_MAX_FILES = 300


def comparison(data: dict[str, Any]) -> Comparison:
    files = tuple(
        ChangedFile(str(f["filename"]), str(f.get("status") or ""), f.get("previous_filename"))
        for f in data.get("files") or []
    )
    return Comparison(str(data.get("status") or ""), files, len(files) < COMPARE_MAX_FILES)


def inline_comment(posted: InlineComment) -> dict[str, Any]:
    """The ``comments[]`` item of GitHub's create-review call."""
    data: dict[str, Any] = {
        "path": posted.path,
        "line": posted.line,
        "side": posted.side,
        "body": posted.body,
    }
    if posted.start_line is not None:
        data.update(start_line=posted.start_line, start_side="RIGHT")
    return data


def files_to_diff(files: list[dict[str, Any]]) -> bytes:
    """A unified diff from the pull request files endpoint (its ``patch`` fields)."""
    parts = []
    for f in files:
        new = f["filename"]
        old = f.get("previous_filename") or new
        parts.append(file_diff(old, new, str(f.get("status") or ""), f.get("patch")))
    return "".join(parts).encode()

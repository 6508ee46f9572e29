"""GitLab's JSON as the code host's records (``app/forge/models.py``), and the other way
round: a review's inline comment as a discussion ``position``, a suggestion in GitLab's
``suggestion:-N+M`` syntax. Pure.

Repositories are known as ``<instance>/<path_with_namespace>`` (``gitlab.com/acme/shop``)
so that they never meet a GitHub ``owner/name``; the job's ``installation_id`` is the
project's numeric id.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from pydantic import SecretStr

from app.diff.assemble import file_diff
from app.forge.models import (
    Author,
    ChangedFile,
    Comment,
    Comparison,
    InlineComment,
    PullRequest,
    Reaction,
    ReviewComment,
    ReviewThread,
)

#: GitLab's access levels, as the permission names the workflows check.
#: GitLab's roles as permissions: Reporter (20) may ask; Guest (10) and Planner (15) may not.
ACCESS_LEVELS = ((50, "admin"), (40, "maintain"), (30, "write"), (20, "triage"))
#: Emoji names of GitLab's award emoji, as reaction contents.
EMOJI = {"thumbsup": "+1", "thumbsdown": "-1", "eyes": "eyes"}
REACTIONS = {content: name for name, content in EMOJI.items()}
#: Project and group access tokens act as bot users named so.
BOT_USER = re.compile(r"(project|group)_\d+_bot(_[0-9a-f]+)?")
#: A suggestion fence the review writes (```suggestion), to be given GitLab's range.
SUGGESTION_FENCE = re.compile(r"^(`{3,})suggestion[ \t]*$", re.MULTILINE)
#: GitLab applies a suggestion over at most 100 lines above the line it is on.
MAX_SUGGESTION_ABOVE = 100


def instance_name(gitlab_url: str) -> str:
    """``https://gitlab.example.com/gitlab`` -> ``gitlab.example.com/gitlab``."""
    parts = urlsplit(gitlab_url)
    return (parts.netloc + parts.path).rstrip("/")


def repo_key(gitlab_url: str, path_with_namespace: str) -> str:
    return f"{instance_name(gitlab_url)}/{path_with_namespace}"


def project_path(gitlab_url: str, key: str) -> str:
    """The project's ``path_with_namespace`` from its repository key."""
    prefix = instance_name(gitlab_url) + "/"
    return key[len(prefix) :] if key.startswith(prefix) else key


def token_for(
    path: str, tokens: dict[str, SecretStr], default: SecretStr | None
) -> SecretStr | None:
    """The token for project ``path``: the one given for the project or its nearest
    group (``acme/web`` before ``acme``), else ``default``."""
    found = [
        (len(prefix), token)
        for prefix, token in tokens.items()
        if path == prefix.strip("/") or path.startswith(prefix.strip("/") + "/")
    ]
    return max(found, key=lambda pair: pair[0])[1] if found else default


def author(user: dict[str, Any] | None, me: str) -> Author:
    """A note's or award's ``author``; bots: the bot's own user, GitLab's bot users."""
    data = user or {}
    login = str(data.get("username") or "")
    bot = login == me or bool(data.get("bot")) or BOT_USER.fullmatch(login) is not None
    return Author(login, bot)


def prepared(data: dict[str, Any]) -> bool:
    """Whether GitLab has prepared the merge request (its diff and refs): ``prepared_at``
    set (GitLab 16.x and later), or on older versions, its ``diff_refs``."""
    if "prepared_at" in data:
        return data["prepared_at"] is not None and bool(data.get("diff_refs"))
    return bool(data.get("diff_refs"))


def merge_request(data: dict[str, Any]) -> PullRequest:
    refs = data.get("diff_refs") or {}
    state = data.get("state") or "opened"
    return PullRequest(
        number=int(data["iid"]),
        title=data.get("title") or "",
        body=data.get("description") or "",
        head_sha=str(refs.get("head_sha") or data.get("sha") or ""),
        base_sha=str(refs.get("base_sha") or ""),
        draft=bool(data.get("draft") or data.get("work_in_progress")),
        state="open" if state == "opened" else "closed",
        author=str((data.get("author") or {}).get("username") or ""),
        labels=tuple(str(label) for label in data.get("labels") or []),
        base_ref=str(data.get("target_branch") or ""),
        head_ref=str(data.get("source_branch") or ""),
    )


def _status(entry: dict[str, Any]) -> str:
    if entry.get("new_file"):
        return "added"
    if entry.get("deleted_file"):
        return "removed"
    if entry.get("renamed_file"):
        return "renamed"
    return "modified"


def diffs_to_text(entries: list[dict[str, Any]]) -> bytes:
    """A unified diff from GitLab's per-file ``diffs`` (MR diffs, compare). A file GitLab
    would not diff (binary, too large: ``diff`` empty with no rename) reads as binary, so
    it is skipped with a note rather than reviewed from nothing."""
    parts = []
    for entry in entries:
        old, new = str(entry.get("old_path") or ""), str(entry.get("new_path") or "")
        status = _status(entry)
        patch = entry.get("diff") or ""
        if (not patch and status != "renamed") or entry.get("too_large"):
            parts.append(file_diff(old, new, status, None))
        else:
            parts.append(file_diff(old, new, status, patch))
    return "".join(parts).encode()


def comparison(data: dict[str, Any], ahead: bool) -> Comparison:
    """GitLab's compare answer (``from`` ... ``to``); ``ahead``: ``to`` descends from
    ``from`` (the workflows' ``status``). A comparison that timed out is incomplete."""
    files = tuple(
        ChangedFile(
            str(d.get("new_path") or ""),
            _status(d),
            str(d["old_path"]) if d.get("renamed_file") else None,
        )
        for d in data.get("diffs") or []
    )
    return Comparison("ahead" if ahead else "diverged", files, not data.get("compare_timeout"))


def comment(note: dict[str, Any], me: str) -> Comment:
    return Comment(int(note["id"]), str(note.get("body") or ""), author(note.get("author"), me))


def thread_comments(
    discussion: dict[str, Any], me: str, review_of: dict[str, int]
) -> list[ReviewComment]:
    """A diff discussion's notes as inline comments: the first one on its line, the rest
    replies to it. ``review_of`` maps a head SHA to the id of the summary note of the
    review of that head (the review an inline comment belongs to)."""
    notes = [n for n in discussion.get("notes") or [] if not n.get("system")]
    if not notes or notes[0].get("type") != "DiffNote":
        return []
    first = notes[0]
    position = first.get("position") or {}
    line = position.get("new_line") or position.get("old_line")
    head = str(position.get("head_sha") or "")
    start = _start_line(position)
    review = review_of.get(head) if tagged_head(str(first.get("body") or "")) else None
    found = [
        ReviewComment(
            id=int(first["id"]),
            body=str(first.get("body") or ""),
            author=author(first.get("author"), me),
            path=str(position.get("new_path") or position.get("old_path") or ""),
            line=line if isinstance(line, int) else None,
            start_line=start,
            commit=head,
            review_id=review,
        )
    ]
    found += [
        ReviewComment(
            id=int(n["id"]),
            body=str(n.get("body") or ""),
            author=author(n.get("author"), me),
            path=found[0].path,
            in_reply_to=found[0].id,
        )
        for n in notes[1:]
    ]
    return found


def _start_line(position: dict[str, Any]) -> int | None:
    start = ((position.get("line_range") or {}).get("start") or {}).get("new_line")
    return start if isinstance(start, int) else None


def thread(discussion: dict[str, Any]) -> ReviewThread | None:
    notes = [n for n in discussion.get("notes") or [] if not n.get("system")]
    if not notes or notes[0].get("type") != "DiffNote":
        return None
    return ReviewThread(str(discussion["id"]), int(notes[0]["id"]), bool(notes[0].get("resolved")))


def reaction(award: dict[str, Any], me: str) -> Reaction:
    name = str(award.get("name") or "")
    return Reaction(EMOJI.get(name, name), author(award.get("user"), me))


def permission(access_level: int) -> str:
    return next((name for level, name in ACCESS_LEVELS if access_level >= level), "none")


#: The hidden tag on each note of a review, naming the head it reviewed.
REVIEW_TAG = re.compile(r"<!-- reviewbot:gitlab-review=([0-9a-f]{7,64}) -->")


def review_tag(head: str) -> str:
    return f"<!-- reviewbot:gitlab-review={head} -->"


def tagged_head(body: str) -> str | None:
    found = REVIEW_TAG.search(body)
    return found.group(1) if found else None


def summary_head(note: dict[str, Any]) -> str | None:
    """The head whose review ``note`` summarises; None for any other note (a note on a
    line, a reply in a thread, a person's comment)."""
    return tagged_head(str(note.get("body") or "")) if note.get("type") is None else None


def inline_body(posted: InlineComment, head: str) -> str:
    """The note of one inline comment: a multi-line suggestion (``start_line``) in
    GitLab's ``suggestion:-N+0`` syntax (the note sits on the range's last line), and the
    review's tag. A suggestion over more lines than GitLab applies is shown as code."""
    body = posted.body
    if posted.start_line is not None and posted.start_line < posted.line:
        above = posted.line - posted.start_line
        info = f"suggestion:-{above}+0" if above <= MAX_SUGGESTION_ABOVE else ""
        body = SUGGESTION_FENCE.sub(lambda m: f"{m.group(1)}{info}", body, 1)
    return f"{body}\n\n{review_tag(head)}"

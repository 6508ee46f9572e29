"""One GitLab project as the workflows use it (``RepoHost``, ``app/forge/protocol.py``).

A review is posted as GitLab has it: one diff discussion per inline comment (its
``position`` checked against the MR's diff first), then the summary as an MR note. Each
note of a review carries a hidden tag with the head it reviewed, so a retry after a
crash posts only what is missing, and the review reads back as one (``reviews``,
``review_comments``). The merge gate is a commit status named ``reviewbot``, and the
bot's approval where an approval rule names it (``approvals.py``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import IO, Any
from urllib.parse import quote

import httpx

from app.diff.parse import LineKind, parse_diff
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
from app.forge.protocol import CommentsRefused
from app.gitlab import positions, records
from app.gitlab.approvals import Approvals
from app.gitlab.client import GitLabClient, GitLabError
from app.gitlab.statuses import CommitStatuses
from app.indexing.archive import ArchiveTooLarge

CHUNK_BYTES = 64 * 1024
#: Seconds between reads of a merge request GitLab has not prepared yet (then the job's
#: own retries wait longer).
PREPARE_WAITS = (0.5, 1.0, 2.0, 4.0)


#: A note of a review: its text, and its position in the diff (None: the summary).
Note = tuple[str, dict[str, Any] | None]


class _NoDraftNotes(Exception):
    """The instance has no Draft Notes API (older GitLab)."""


class ProjectApi:
    """The calls reviewbot makes on one project (by id; ``path`` names it in messages)."""

    def __init__(
        self,
        client: GitLabClient,
        project_id: int,
        path: str,
        prepare_waits: Sequence[float] = PREPARE_WAITS,
    ) -> None:
        self.client = client
        self.prepare_waits = tuple(prepare_waits)
        self.path = path
        self.base = f"/projects/{project_id or quote(path, safe='')}"
        self.gate = CommitStatuses(self._get, self._send)
        self.approvals = Approvals(self._get, self._send, lambda: self._me)
        self._checked: dict[int, tuple[int, str]] = {}  # check id -> (MR, head)

    def _get(self, path: str, **params: Any) -> Any:
        return self.client.call("GET", self.base + path, params=params or None).json()

    def _send(self, method: str, path: str, data: dict[str, Any]) -> Any:
        return self.client.call(method, self.base + path, json=data).json()

    def _mr(self, number: int) -> str:
        return f"/merge_requests/{number}"

    @property
    def _me(self) -> str:
        return self.client.username

    # -- reading ------------------------------------------------------------------------

    def pull(self, number: int) -> PullRequest:
        """The merge request once GitLab has prepared it (read again after each of
        ``prepare_waits``); ``GitLabError`` (503, retried) when it still is not."""
        for wait in (*self.prepare_waits, None):
            data = self._get(self._mr(number))
            if records.prepared(data):
                return records.merge_request(data)
            if wait is not None:
                time.sleep(wait)
        raise GitLabError(
            f"GitLab has not prepared merge request !{number} of {self.path} yet"
            " (prepared_at is null); the review is tried again later",
            503,
        )

    def default_branch(self) -> str:
        return str(self._get("").get("default_branch") or "main")

    def pull_diff(self, number: int) -> bytes:
        return records.diffs_to_text(self.client.paginate(self.base + self._mr(number) + "/diffs"))

    def compare_diff(self, base: str, head: str) -> bytes:
        data = self._get("/repository/compare", **{"from": base, "to": head})
        return records.diffs_to_text(data.get("diffs") or [])

    def compare(self, base: str, head: str) -> Comparison | None:
        """``head`` against ``base`` (from their merge base, as GitHub's three dots); None
        when GitLab cannot compare them (a commit gone after a force push)."""
        if base == head:
            return Comparison("identical", ())
        try:
            merge_base = self._get("/repository/merge_base", **{"refs[]": [base, head]})
            data = self._get("/repository/compare", **{"from": base, "to": head})
        except GitLabError as exc:
            if exc.status in {400, 404}:
                return None
            raise
        found = records.comparison(data, ahead=merge_base.get("id") == base)
        if merge_base.get("id") == head:
            return Comparison("behind", found.files, found.complete)
        return found

    def commit_sha(self, ref: str) -> str:
        return str(self._get(f"/repository/commits/{quote(ref, safe='')}")["id"])

    def content(self, path: str, ref: str) -> bytes | None:
        try:
            response = self.client.call(
                "GET",
                f"{self.base}/repository/files/{quote(path, safe='')}/raw",
                params={"ref": ref},
            )
        except GitLabError as exc:
            if exc.status == 404:
                return None
            raise
        return response.content

    def download_tarball(self, ref: str, into: IO[bytes], max_bytes: int) -> int:
        """Stream the project's archive of ``ref`` (``archive.tar.gz``) into ``into``."""
        written = 0
        with self.client.stream(f"{self.base}/repository/archive.tar.gz", sha=ref) as response:
            try:
                for chunk in response.iter_bytes(CHUNK_BYTES):
                    written += len(chunk)
                    if written > max_bytes:
                        raise ArchiveTooLarge(
                            f"the archive of {self.path}@{ref} is larger than {max_bytes}"
                            " bytes (REVIEWBOT_ARCHIVE_MAX_BYTES); nothing was indexed"
                        )
                    into.write(chunk)
            except httpx.HTTPError as exc:
                raise GitLabError(f"GitLab archive download failed: {type(exc).__name__}") from None
        return written

    def _notes(self, number: int) -> list[dict[str, Any]]:
        notes = self.client.paginate(self.base + self._mr(number) + "/notes", sort="asc")
        return [n for n in notes if not n.get("system")]

    def _discussions(self, number: int) -> list[dict[str, Any]]:
        return self.client.paginate(self.base + self._mr(number) + "/discussions")

    def reviews(self, number: int) -> list[Review]:
        """The review summaries: the MR notes that carry a review's tag."""
        return [
            Review(int(n["id"]), str(n.get("body") or ""))
            for n in self._notes(number)
            if records.summary_head(n)
        ]

    def issue_comments(self, number: int) -> list[Comment]:
        """Notes on the MR's conversation: not on a line, not a review's summary."""
        return [
            records.comment(n, self._me)
            for n in self._notes(number)
            if n.get("type") != "DiffNote" and records.summary_head(n) is None
        ]

    def review_comments(self, number: int) -> list[ReviewComment]:
        discussions = self._discussions(number)
        review_of = {
            head: int(note["id"])
            for d in discussions
            for note in d.get("notes") or []
            if (head := records.summary_head(note))
        }
        return [c for d in discussions for c in records.thread_comments(d, self._me, review_of)]

    def review_comment(self, number: int, comment_id: int) -> ReviewComment | None:
        return next((c for c in self.review_comments(number) if c.id == comment_id), None)

    def review_threads(self, number: int) -> list[ReviewThread]:
        found = [records.thread(d) for d in self._discussions(number)]
        return [t for t in found if t is not None]

    def review_comment_reactions(self, number: int, comment_id: int) -> list[Reaction]:
        path = f"{self.base}{self._mr(number)}/notes/{comment_id}/award_emoji"
        return [records.reaction(a, self._me) for a in self.client.paginate(path)]

    def labels(self) -> list[str]:
        return [str(label["name"]) for label in self.client.paginate(self.base + "/labels")]

    def permission(self, user: str) -> str:
        """The user's role on the project (inherited ones count), as a permission name."""
        members = self.client.paginate(self.base + "/members/all", query=user)
        levels = [int(m.get("access_level") or 0) for m in members if m.get("username") == user]
        return records.permission(max(levels, default=0))

    # -- writing ------------------------------------------------------------------------

    def create_review(
        self, number: int, commit: str, body: str, comments: list[InlineComment]
    ) -> int:
        """Post the review of ``commit`` as GitLab's own reviews are posted: its inline
        comments and summary as draft notes, published together (one notification), or
        where the instance has no Draft Notes API, as discussions and a note. What an
        earlier attempt already published is not posted again."""
        mr = self._get(self._mr(number))
        refs = mr.get("diff_refs") or {}
        places = self._positions(number, refs, comments)
        summary = self._summary(number, commit)
        if summary is not None:  # published by an attempt that died after
            return summary
        published = {
            (c.path, c.line, c.body) for c in self.review_comments(number) if c.commit == commit
        }
        notes: list[Note] = [
            (text, place)
            for comment, place in zip(comments, places, strict=True)
            if (comment.path, comment.line, text := records.inline_body(comment, commit))
            not in published
        ]
        notes.append((f"{body}\n\n{records.review_tag(commit)}", None))
        try:
            self._publish_drafts(number, notes)
        except _NoDraftNotes:
            self._post_one_by_one(number, notes)
        found = self._summary(number, commit)
        if found is None:
            raise GitLabError(f"the summary of the review of {commit[:12]} was not published")
        return found

    def _summary(self, number: int, commit: str) -> int | None:
        for note in self._notes(number):
            if records.summary_head(note) == commit:
                return int(note["id"])
        return None

    def _publish_drafts(self, number: int, notes: list[Note]) -> None:
        """Each note as a draft, then all published at once; a refused position leaves no
        draft (``CommentsRefused``). Drafts a dead attempt left (the bot's drafts are its
        reviews' alone) are dropped first. ``_NoDraftNotes`` without the Draft Notes API."""
        drafts = self._mr(number) + "/draft_notes"
        try:
            stale = [int(d["id"]) for d in self.client.paginate(self.base + drafts)]
        except GitLabError as exc:
            if exc.status == 404:
                raise _NoDraftNotes from None
            raise
        self._drop(drafts, stale)
        made: list[int] = []
        try:
            for text, place in notes:
                data: dict[str, Any] = {"note": text}
                if place is not None:
                    data["position"] = place
                made.append(int(self._send("POST", drafts, data)["id"]))
        except GitLabError as exc:
            if exc.status != 400:
                raise
            self._drop(drafts, made)
            raise CommentsRefused(str(exc), exc.status) from None
        self.client.call("POST", f"{self.base}{drafts}/bulk_publish")

    def _drop(self, drafts: str, ids: list[int]) -> None:
        for draft in ids:
            self.client.call("DELETE", f"{self.base}{drafts}/{draft}")

    def _post_one_by_one(self, number: int, notes: list[Note]) -> None:
        """Each inline note as a diff discussion, then the summary as a note: all or
        none of the discussions (``CommentsRefused``)."""
        made: list[tuple[str, int]] = []
        for text, place in notes:
            if place is None:
                self._send("POST", self._mr(number) + "/notes", {"body": text})
                continue
            try:
                made.append(self._discuss(number, text, place))
            except GitLabError as exc:
                if exc.status != 400:
                    raise
                self._withdraw(number, made)
                raise CommentsRefused(str(exc), exc.status) from None

    def _positions(
        self, number: int, refs: dict[str, Any], comments: list[InlineComment]
    ) -> list[dict[str, Any]]:
        """Each comment's position, from the MR's diff; ``CommentsRefused`` (nothing
        posted) for a line the diff does not show."""
        if not comments:
            return []
        files = {f.path: f for f in parse_diff(self.pull_diff(number))}
        places = []
        for comment in comments:
            diff = files.get(comment.path)
            line = positions.diff_line(diff, comment.line, comment.side) if diff else None
            if diff is None or line is None:
                raise CommentsRefused(
                    f"{comment.path}:{comment.line} is not a line of the merge request's diff",
                    400,
                )
            old_line = line.old_no if line.kind is not LineKind.ADDED else None
            new_line = line.new_no if line.kind is not LineKind.REMOVED else None
            place = positions.position(diff.path, diff.old_path, refs, old_line, new_line)
            span = positions.line_range(diff, comment)
            if span is not None:
                place["line_range"] = span
            places.append(place)
        return places

    def _discuss(self, number: int, body: str, place: dict[str, Any]) -> tuple[str, int]:
        data = self._send(
            "POST", self._mr(number) + "/discussions", {"body": body, "position": place}
        )
        return str(data["id"]), int(data["notes"][0]["id"])

    def _withdraw(self, number: int, made: list[tuple[str, int]]) -> None:
        """Delete the discussions of a review GitLab refused part of: all or none."""
        for discussion, note in made:
            self.client.call(
                "DELETE", f"{self.base}{self._mr(number)}/discussions/{discussion}/notes/{note}"
            )

    def start_check(self, number: int, head: str) -> int:
        check_id = self.gate.start(number, head)
        self._checked[check_id] = (number, head)
        return check_id

    def finish_check(self, check_id: int, conclusion: str, title: str, summary: str) -> None:
        """The gate's commit status, then the bot's approval where a rule asks for it."""
        number, head = self._checked.pop(check_id)
        self.gate.finish(check_id, conclusion, title)
        self.approvals.settle(number, head, conclusion)

    def comment(self, number: int, body: str) -> int:
        return int(self._send("POST", self._mr(number) + "/notes", {"body": body})["id"])

    def react(self, number: int, comment_id: int, content: str) -> None:
        name = records.REACTIONS.get(content, content)
        try:
            self._send("POST", f"{self._mr(number)}/notes/{comment_id}/award_emoji", {"name": name})
        except GitLabError as exc:
            if exc.status not in {400, 404}:  # given before (GitLab refuses a second one)
                raise

    def reply(self, number: int, comment_id: int, body: str) -> int:
        """A reply in the discussion that holds note ``comment_id``."""
        discussion = next(
            (
                d
                for d in self._discussions(number)
                if any(n.get("id") == comment_id for n in d.get("notes") or [])
            ),
            None,
        )
        if discussion is None:
            raise GitLabError(f"no discussion of !{number} holds note {comment_id}", 404)
        path = f"{self._mr(number)}/discussions/{discussion['id']}/notes"
        return int(self._send("POST", path, {"body": body})["id"])

    def resolve_thread(self, number: int, node_id: str) -> None:
        self._send("PUT", f"{self._mr(number)}/discussions/{node_id}", {"resolved": True})

    def update_description(self, number: int, body: str) -> None:
        self._send("PUT", self._mr(number), {"description": body})

    def add_labels(self, number: int, names: list[str]) -> None:
        self._send("PUT", self._mr(number), {"add_labels": ",".join(names)})

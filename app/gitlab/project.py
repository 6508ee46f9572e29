"""One GitLab project as the workflows use it (``RepoHost``, ``app/forge/protocol.py``).

A review is posted as GitLab has it: one diff discussion per inline comment (its
``position`` checked against the MR's diff first), then the summary as an MR note. Each
note of a review carries a hidden tag with the head it reviewed, so a retry after a
crash posts only what is missing, and the review reads back as one (``reviews``,
``review_comments``). The merge gate is a commit status named ``reviewbot``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
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
from app.gitlab.client import GitLabClient, GitLabError
from app.indexing.archive import ArchiveTooLarge

CHUNK_BYTES = 64 * 1024
#: The check's conclusion as a commit status state (neutral: a review that has nothing
#: to block on; cancelled: one that failed, never green).
STATUS_STATES = {
    "success": "success",
    "neutral": "success",
    "failure": "failed",
    "cancelled": "canceled",
}
STATUS_NAME = "reviewbot"
MAX_DESCRIPTION = 255  # GitLab's limit on a commit status's description
#: Seconds between reads of a merge request GitLab has not prepared yet (then the job's
#: own retries wait longer).
PREPARE_WAITS = (0.5, 1.0, 2.0, 4.0)


@dataclass(frozen=True)
class StatusTarget:
    """Where the gate's commit status is set: the commit, and its pipeline's fields."""

    sha: str
    fields: dict[str, Any]


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
        self._statuses: dict[int, StatusTarget] = {}  # status id -> where it was set

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
        """Post the review of ``commit``: its inline discussions, then its summary note;
        what an earlier attempt already posted is not posted again."""
        mr = self._get(self._mr(number))
        refs = mr.get("diff_refs") or {}
        positions = self._positions(number, refs, comments)
        posted = {
            (c.path, c.line, c.body) for c in self.review_comments(number) if c.commit == commit
        }
        made: list[tuple[str, int]] = []
        for comment, place in zip(comments, positions, strict=True):
            text = records.inline_body(comment, commit)
            if (comment.path, comment.line, text) in posted:
                continue
            try:
                made.append(self._discuss(number, text, place))
            except GitLabError as exc:
                if exc.status != 400:
                    raise
                self._withdraw(number, made)
                raise CommentsRefused(str(exc), exc.status) from None
        for note in self._notes(number):
            if records.summary_head(note) == commit:  # posted by an attempt that died after
                return int(note["id"])
        summary = f"{body}\n\n{records.review_tag(commit)}"
        return int(self._send("POST", self._mr(number) + "/notes", {"body": summary})["id"])

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
        """``running`` in the merge request's pipeline, unless it already is (an attempt
        that did not live to finish it): GitLab refuses a transition from a state to
        itself."""
        target = self._status_target(number, head)
        current = self._status(target.sha)
        if current is not None and current.get("status") == "running":
            status_id = int(current["id"])
        else:
            data = {"state": "running", "name": STATUS_NAME, "description": "Reviewing"}
            sent = self._send("POST", f"/statuses/{target.sha}", {**data, **target.fields})
            status_id = int(sent["id"])
        self._statuses[status_id] = target
        return status_id

    def finish_check(self, check_id: int, conclusion: str, title: str, summary: str) -> None:
        target = self._statuses.pop(check_id)
        state = STATUS_STATES.get(conclusion, "failed")
        current = self._status(target.sha)
        if current is not None and current.get("status") == state:
            return  # already where it should be: set by an earlier attempt
        data = {"state": state, "name": STATUS_NAME, "description": title[:MAX_DESCRIPTION]}
        self._send("POST", f"/statuses/{target.sha}", {**data, **target.fields})

    def _status_target(self, number: int, head: str) -> StatusTarget:
        """Where the gate's status goes so that it gates the merge: the MR's head pipeline
        when it runs on ``head`` (a merge-request pipeline) or on the merge of ``head``
        (merged results, merge trains), else ``head`` on its branch (branch pipelines;
        a fork's branch is not in this project, so then no ref)."""
        mr = self._get(self._mr(number))
        fields: dict[str, Any] = {"target_url": mr["web_url"]} if mr.get("web_url") else {}
        pipeline = mr.get("head_pipeline") or {}
        sha = str(pipeline.get("sha") or "")
        if pipeline.get("id") and sha and (sha == head or head in self._parents(sha)):
            fields |= {"pipeline_id": int(pipeline["id"]), "ref": pipeline.get("ref")}
            return StatusTarget(sha, fields)
        if mr.get("source_project_id") in (None, mr.get("target_project_id")):
            fields["ref"] = mr.get("source_branch")
        return StatusTarget(head, {k: v for k, v in fields.items() if v is not None})

    def _parents(self, commit: str) -> list[str]:
        return [str(p) for p in self._get(f"/repository/commits/{commit}").get("parent_ids") or []]

    def _status(self, head: str) -> dict[str, Any] | None:
        """The newest commit status of the bot's name on ``head``, if any."""
        found = self._get(f"/repository/commits/{head}/statuses", name=STATUS_NAME)
        mine = [s for s in found if isinstance(s, dict) and s.get("name") == STATUS_NAME]
        return max(mine, key=lambda s: int(s.get("id") or 0), default=None)

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

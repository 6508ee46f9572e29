"""A fake GitLab (REST API v4 and git's smart HTTP) on 127.0.0.1, serving one real git
repository as a project with merge requests.

It checks the access token (``PRIVATE-TOKEN``) on every API call and as the HTTP Basic
password of git, records every request, and scripts failures (``fail_next``; with
``apply=True`` the request takes effect before the failure is returned, a response lost
in transit). Shapes follow GitLab's REST documentation (merge requests, notes,
discussions, award emoji, commit statuses, repositories, repository files): a body
missing what GitLab requires is refused with 400 and logged in ``refused``; a diff
discussion whose ``position`` is not a line of the MR's diff is refused with 400 as
GitLab does (``line_code`` can't be blank).
"""

from __future__ import annotations

import hashlib
import json
import re
import ssl
import subprocess
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import httpx

from app.diff.parse import DiffLine, FileDiff, LineKind, parse_diff
from tests.fakes.git_http import basic_credentials, git_backend
from tests.fakes.loopback import serving_fake
from tests.gitrepo import GitRepo

Reply = tuple[int, dict[str, str], bytes]
LINE_CODE = '400 Bad request - Note {:line_code=>["can\'t be blank", "must be a valid line code"]}'
STATUS_STATES = {"pending", "running", "success", "failed", "canceled", "skipped"}
#: The state machine's event that leads to each state (as GitLab's errors name them).
STATUS_EVENTS = {
    "pending": "enqueue",
    "running": "run",
    "success": "success",
    "failed": "drop",
    "canceled": "cancel",
    "skipped": "skip",
}


@dataclass
class MergeRequest:
    iid: int
    base: str  # the target branch's commit the MR started from
    head: str
    title: str = "Apply coupons at checkout"
    description: str = "Uses the discount helper from pricing."
    draft: bool = False
    author: str = "alice"
    labels: list[str] = field(default_factory=list)
    target_branch: str = "main"
    source_branch: str = "coupons"
    state: str = "opened"
    # GitLab prepares an MR after it is opened: until then (this many reads of it) its
    # prepared_at and diff_refs are null and its diffs are empty (gitlab-org/gitlab#386562)
    unprepared_reads: int = 0
    # the MR's pipelines, oldest first: {"id", "sha", "ref", "source"}; the last is its
    # head pipeline (a merge-request pipeline's ref is refs/merge-requests/<iid>/head)
    pipelines: list[dict[str, Any]] = field(default_factory=list)
    # approval rules (Premium: None answers approval_state with 404, as on Free), each
    # {"name", "eligible_approvers": [usernames]}; who approved, and at which head
    approval_rules: list[dict[str, Any]] | None = None
    approved_by: dict[str, str] = field(default_factory=dict)  # username -> head sha


@dataclass
class FakeGitLab:
    repo: GitRepo
    path: str  # path_with_namespace
    project_id: int
    token: str
    bot_username: str = "reviewbot"
    version: str = "17.6.0"
    token_access: int = 40  # the token's role on the project (Maintainer)
    hooks: list[dict[str, Any]] = field(default_factory=list)  # the project's webhooks
    # each hook's delivery events, newest first ({"response_status": "200", ...})
    hook_events: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    token_scopes: list[str] = field(default_factory=lambda: ["api"])
    mrs: dict[int, MergeRequest] = field(default_factory=dict)
    notes: list[dict[str, Any]] = field(default_factory=list)  # every note, in order
    awards: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # by note id
    statuses: list[dict[str, Any]] = field(default_factory=list)  # each accepted post
    status_records: list[dict[str, Any]] = field(default_factory=list)  # as GitLab has them
    external_pipelines: list[dict[str, Any]] = field(default_factory=list)  # for statuses
    labels: list[str] = field(default_factory=list)
    members: dict[str, int] = field(default_factory=dict)  # username -> access level
    requests: list[tuple[str, str]] = field(default_factory=list)
    refused: list[tuple[str, str, str]] = field(default_factory=list)
    # set: diff discussions past this many are refused as GitLab refuses a position it
    # finds no line code for (its diff of the MR moved on meanwhile)
    refuse_discussions_after: int | None = None
    # draft notes (GitLab's Draft Notes API): the bot's unpublished notes, and whether the
    # instance has the API (older ones answer 404); each publish, note or discussion made
    # at once sends the MR's participants one notification
    drafts: list[dict[str, Any]] = field(default_factory=list)
    drafts_supported: bool = True
    notifications: int = 0
    webhook_url: str = ""
    webhook_secret: str = ""
    base_url: str = ""
    _failures: list[tuple[str, str, int, bool]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: int = 1000

    # -- test helpers ---------------------------------------------------------------------

    def fail_next(self, method: str, suffix: str, statuses: list[int], apply: bool = False) -> None:
        with self._lock:
            self._failures += [(method, suffix, s, apply) for s in statuses]

    def deliver(self, event: str, payload: dict[str, Any], uuid_: str | None = None) -> int:
        """POST a webhook to ``webhook_url`` as GitLab does; returns the status code."""
        body = json.dumps(payload).encode()
        headers = {
            "Content-Type": "application/json",
            "X-Gitlab-Event": event,
            "X-Gitlab-Token": self.webhook_secret,
            "X-Gitlab-Event-UUID": uuid_ or str(uuid.uuid4()),
            "X-Gitlab-Instance": self.base_url,
        }
        return httpx.post(self.webhook_url, content=body, headers=headers, timeout=30).status_code

    def discussions(self, iid: int) -> list[dict[str, Any]]:
        """The MR's discussions as the API lists them."""
        order: dict[str, list[dict[str, Any]]] = {}
        for note in self.notes:
            if note["_mr"] == iid:
                order.setdefault(note["_discussion"], []).append(_public(note))
        return [
            {"id": did, "individual_note": notes[0]["type"] is None, "notes": notes}
            for did, notes in order.items()
        ]

    def diff_threads(self, iid: int) -> list[dict[str, Any]]:
        return [d for d in self.discussions(iid) if d["notes"][0]["type"] == "DiffNote"]

    def summaries(self, iid: int) -> list[dict[str, Any]]:
        """The bot's notes on the MR's conversation (review summaries, answers)."""
        return [
            _public(n)
            for n in self.notes
            if n["_mr"] == iid
            and n["type"] is None
            and n["author"]["username"] == self.bot_username
        ]

    def add_note(
        self, iid: int, body: str, username: str, discussion: str | None = None
    ) -> dict[str, Any]:
        """A person's note on the MR (``discussion``: a reply in that discussion)."""
        with self._lock:
            return self._note(iid, body, username, discussion=discussion)

    def award(self, note_id: int, name: str, username: str) -> None:
        self.awards.setdefault(note_id, []).append(
            {"id": len(self.awards) + 1, "name": name, "user": {"username": username}}
        )

    def git(self, *args: str) -> bytes:
        return subprocess.run(
            ["git", "-C", str(self.repo.root), *args], capture_output=True, check=False
        ).stdout

    # -- model ----------------------------------------------------------------------------

    def _next_id(self) -> int:
        self._ids += 1
        return self._ids

    def _note(
        self,
        iid: int,
        body: str,
        username: str,
        position: dict[str, Any] | None = None,
        discussion: str | None = None,
    ) -> dict[str, Any]:
        first = next((n for n in self.notes if n["_discussion"] == discussion), None)
        kind = "DiffNote" if position or (first and first["type"] == "DiffNote") else None
        if discussion and kind is None:
            kind = "DiscussionNote"
        note = {
            "id": self._next_id(),
            "type": kind,
            "body": body,
            "author": {"id": 7, "username": username, "name": username},
            "system": False,
            "noteable_type": "MergeRequest",
            "noteable_iid": iid,
            "resolvable": kind == "DiffNote",
            "resolved": False,
            "position": position or (first or {}).get("position"),
            "_mr": iid,
            "_discussion": discussion or uuid.uuid4().hex,
        }
        self.notes.append(note)
        return note

    def _diff_refs(self, mr: MergeRequest) -> dict[str, str]:
        merge_base = self.git("merge-base", mr.base, mr.head).decode().strip()
        return {"base_sha": merge_base, "head_sha": mr.head, "start_sha": mr.base}

    def _mr_json(self, mr: MergeRequest) -> dict[str, Any]:
        prepared = mr.unprepared_reads <= 0
        return {
            "id": 100 + mr.iid,
            "iid": mr.iid,
            "project_id": self.project_id,
            "title": mr.title,
            "description": mr.description,
            "state": mr.state,
            "draft": mr.draft,
            "work_in_progress": mr.draft,
            "author": {"id": 3, "username": mr.author, "name": mr.author},
            "labels": list(mr.labels),
            "source_branch": mr.source_branch,
            "target_branch": mr.target_branch,
            "sha": mr.head,
            "diff_refs": self._diff_refs(mr) if prepared else None,
            "prepared_at": "2026-12-05T06:00:00.000Z" if prepared else None,
            "head_pipeline": mr.pipelines[-1] if mr.pipelines else None,
            "source_project_id": self.project_id,
            "target_project_id": self.project_id,
            "web_url": f"{self.base_url}/{self.path}/-/merge_requests/{mr.iid}",
        }

    def _file_diffs(self, base: str, head: str) -> list[dict[str, Any]]:
        """GitLab's per-file diffs of ``base``..``head``: ``diff`` from the first hunk."""
        listed = self.git("diff", "--name-status", "-M", base, head).decode()
        out = []
        for line in listed.splitlines():
            code, *paths = line.split("\t")
            old, new = paths[0], paths[-1]
            text = self.git("diff", "-M", base, head, "--", *dict.fromkeys([old, new])).decode()
            hunks = text[text.index("@@") :] if "\n@@" in text or text.startswith("@@") else ""
            out.append(
                {
                    "old_path": old,
                    "new_path": new,
                    "a_mode": "100644",
                    "b_mode": "100644",
                    "new_file": code[0] == "A",
                    "renamed_file": code[0] == "R",
                    "deleted_file": code[0] == "D",
                    "diff": hunks,
                }
            )
        return out

    def _position_problem(self, mr: MergeRequest, position: dict[str, Any]) -> str | None:
        """Why GitLab would refuse ``position`` on this MR, or None."""
        refs = self._diff_refs(mr)
        if any(position.get(k) != refs[k] for k in ("base_sha", "head_sha", "start_sha")):
            return LINE_CODE
        diff = parse_diff(self.git("diff", "-M", refs["base_sha"], mr.head))
        found = next((f for f in diff if f.path == position.get("new_path")), None)
        if found is None:
            return LINE_CODE
        old, new = position.get("old_line"), position.get("new_line")
        lines = [line for hunk in found.hunks for line in hunk.lines]
        if not any(_names(line, old, new) for line in lines):
            return LINE_CODE
        span = position.get("line_range")
        if span is None:
            return None
        codes = _line_codes(found)  # GitLab's code of each line, in the diff's order
        at = []
        for end in (span.get("start") or {}, span.get("end") or {}):
            line = codes.get(str(end.get("line_code")))
            if line is None or not _names(line, end.get("old_line"), end.get("new_line")):
                return LINE_CODE
            if (end.get("type") == "new") != (line.kind is LineKind.ADDED):
                return LINE_CODE
            at.append(lines.index(line))
        return None if at[0] <= at[1] else LINE_CODE

    # -- routes ---------------------------------------------------------------------------

    def handle(self, method: str, raw: str, headers: dict[str, str], body: bytes) -> Reply:
        url = urlparse(raw)
        path, query = url.path, parse_qs(url.query)
        self.requests.append((method, path))
        if path.startswith(f"/{self.path}.git/"):
            _user, token = basic_credentials(headers)
            if token != self.token:
                return (
                    401,
                    {"www-authenticate": 'Basic realm="GitLab"'},
                    b"HTTP Basic: Access denied\n",
                )
            rest = path[len(f"/{self.path}.git") :]
            return git_backend(self.repo.root, rest, method, url.query, headers, body)
        if not path.startswith("/api/v4/"):
            return _json(404, {"message": "404 Not Found"})
        if headers.get("private-token") != self.token:
            return _json(401, {"message": "401 Unauthorized"})
        rest = path[len("/api/v4") :]
        scripted = self._scripted(method, rest)
        if scripted and not scripted[1]:
            return _json(scripted[0], {"message": f"{scripted[0]} scripted failure"})
        data = json.loads(body) if body else {}
        with self._lock:
            reply = self._route(method, rest, query, data)
        if scripted:
            return _json(scripted[0], {"message": f"{scripted[0]} scripted failure after applying"})
        return reply

    def _scripted(self, method: str, path: str) -> tuple[int, bool] | None:
        with self._lock:
            found = next(
                (f for f in self._failures if f[0] == method and path.endswith(f[1])), None
            )
            if found is None:
                return None
            self._failures.remove(found)
        return found[2], found[3]

    def _refuse(self, method: str, rest: str, problem: str) -> Reply:
        self.refused.append((method, rest, problem))
        return _json(400, {"error": problem})

    def _route(self, method: str, rest: str, query: dict[str, list[str]], data: Any) -> Reply:
        if rest == "/user":
            return _json(200, {"id": 7, "username": self.bot_username, "bot": False})
        if rest == "/version":
            return _json(200, {"version": self.version, "revision": "fake"})
        if rest == "/personal_access_tokens/self":  # personal, project and group tokens
            return _json(200, {"id": 1, "name": "reviewbot", "scopes": self.token_scopes})
        project = re.fullmatch(r"/projects/([^/]+)(/.*)?", rest)
        if project is None or unquote(project.group(1)) not in {str(self.project_id), self.path}:
            return _json(404, {"message": "404 Project Not Found"})
        sub = project.group(2) or ""
        q = {k: v[-1] for k, v in query.items()}
        if sub == "":
            return _json(200, self._project())
        if sub.startswith("/hooks"):  # Maintainer and above may list and manage them
            return self._hooks(method, sub, q, data)
        if sub.startswith("/repository/"):
            return self._repository(sub, q, query)
        if (m := re.fullmatch(r"/statuses/([0-9a-f]{40})", sub)) and method == "POST":
            return self._status(m.group(1), data)
        if sub == "/labels":
            return _json(200, _page([{"id": i, "name": n} for i, n in enumerate(self.labels)], q))
        if sub == "/members/all":
            found = [
                {"id": i, "username": u, "access_level": level}
                for i, (u, level) in enumerate(self.members.items())
                if q.get("query", "") in u
            ]
            return _json(200, _page(found, q))
        mr = re.fullmatch(r"/merge_requests/(\d+)(/.*)?", sub)
        if mr is None or int(mr.group(1)) not in self.mrs:
            return _json(404, {"message": "404 Not found"})
        return self._merge_request(method, self.mrs[int(mr.group(1))], mr.group(2) or "", q, data)

    def _project(self) -> dict[str, Any]:
        return {
            "id": self.project_id,
            "path_with_namespace": self.path,
            "default_branch": "main",
            "web_url": f"{self.base_url}/{self.path}",
            "permissions": {
                "project_access": {"access_level": self.token_access},
                "group_access": None,
            },
        }

    def _repository(self, sub: str, q: dict[str, str], query: dict[str, list[str]]) -> Reply:
        if m := re.fullmatch(r"/repository/commits/([0-9a-f]{40})", sub):
            parents = self.git("rev-list", "--parents", "-n1", m.group(1)).decode().split()[1:]
            return _json(200, {"id": m.group(1), "parent_ids": parents})
        if m := re.fullmatch(r"/repository/commits/([0-9a-f]{40})/statuses", sub):
            found = [
                s
                for s in self.status_records
                if s["sha"] == m.group(1) and q.get("name") in (None, s["name"])
            ]
            return _json(200, _page(found, q))
        if sub == "/repository/compare":
            base, head = q.get("from", ""), q.get("to", "")
            merge_base = self.git("merge-base", base, head).decode().strip()
            if not merge_base:
                return _json(404, {"message": "404 Not found"})
            commits = self.git("rev-list", f"{merge_base}..{head}").decode().split()
            return _json(
                200,
                {
                    "commit": {"id": head} if commits else None,
                    "commits": [{"id": c} for c in commits],
                    "diffs": self._file_diffs(merge_base, head),
                    "compare_timeout": False,
                    "compare_same_ref": base == head,
                },
            )
        if sub == "/repository/merge_base":
            refs = query.get("refs[]", [])
            found = self.git("merge-base", *refs).decode().strip() if len(refs) == 2 else ""
            return _json(200, {"id": found}) if found else _json(404, {"message": "404 Not found"})
        if m := re.fullmatch(r"/repository/commits/(.+)", sub):
            sha = self.git("rev-parse", "--verify", "-q", f"{unquote(m.group(1))}^{{commit}}")
            if not sha.strip():
                return _json(404, {"message": "404 Commit Not Found"})
            return _json(200, {"id": sha.decode().strip()})
        if m := re.fullmatch(r"/repository/files/(.+)/raw", sub):
            done = subprocess.run(
                [
                    "git",
                    "-C",
                    str(self.repo.root),
                    "show",
                    f"{q.get('ref', 'HEAD')}:{unquote(m.group(1))}",
                ],
                capture_output=True,
                check=False,
            )
            if done.returncode != 0:
                return _json(404, {"message": "404 File Not Found"})
            return 200, {"content-type": "text/plain"}, done.stdout
        if sub == "/repository/archive.tar.gz":
            sha = self.git("rev-parse", q.get("sha", "HEAD")).decode().strip()
            prefix = f"{self.path.split('/')[-1]}-{sha}-{sha}/"
            archive = self.git("archive", "--format=tar.gz", f"--prefix={prefix}", sha)
            return 200, {"content-type": "application/x-gzip"}, archive
        return _json(404, {"message": "404 Not found"})

    def _status(self, sha: str, data: dict[str, Any]) -> Reply:
        """GitLab's commit status service: a status of that name that is still pending or
        running makes the transition asked (a transition from a state to itself, or from
        running back to pending, is refused with 400, as GitLab's state machine refuses
        it); otherwise a new status is made. ``statuses`` logs each accepted post."""
        if data.get("state") not in STATUS_STATES:
            return self._refuse("POST", "/statuses", "state does not have a valid value")
        if len(str(data.get("description") or "")) > 255:
            return self._refuse("POST", "/statuses", "description is too long")
        name, state = data.get("name") or "default", data["state"]
        pipeline = self._status_pipeline(sha, data)
        if pipeline is None:
            return _json(404, {"message": "404 Pipeline Not Found"})
        live = next(
            (
                s
                for s in reversed(self.status_records)
                if s["sha"] == sha
                and s["name"] == name
                and s["pipeline_id"] == pipeline["id"]
                and s["status"] in {"pending", "running"}
            ),
            None,
        )
        if live is not None and (
            live["status"] == state or (live["status"], state) == ("running", "pending")
        ):
            event = STATUS_EVENTS[state]
            return _json(
                400, {"message": f"Cannot transition status via :{event} from :{live['status']}"}
            )
        if live is None:
            live = {"id": self._next_id(), "sha": sha, "name": name, "pipeline_id": pipeline["id"]}
            self.status_records.append(live)
        live.update(status=state, description=data.get("description"))
        self.statuses.append(dict(live))
        return _json(201, live)

    def _hooks(self, method: str, sub: str, q: dict[str, str], data: dict[str, Any]) -> Reply:
        """The project's webhooks (Projects API, "Webhooks")."""
        if self.token_access < 40:
            return _json(403, {"message": "403 Forbidden"})
        if sub == "/hooks" and method == "GET":
            return _json(200, _page([_unsecret(h) for h in self.hooks], q))
        if (m := re.fullmatch(r"/hooks/(\d+)/events", sub)) and method == "GET":
            return _json(200, _page(self.hook_events.get(int(m.group(1)), []), q))
        if not isinstance(data.get("url"), str) or not data["url"].startswith("http"):
            return self._refuse(method, "/hooks", "url is missing or invalid")
        if sub == "/hooks" and method == "POST":
            hook = {"id": self._next_id(), **data}
            self.hooks.append(hook)
            return _json(201, _unsecret(hook))
        found = next((h for h in self.hooks if sub == f"/hooks/{h['id']}"), None)
        if found is None or method != "PUT":
            return _json(404, {"message": "404 Not found"})
        found.update(data)
        return _json(200, _unsecret(found))

    def _status_pipeline(self, sha: str, data: dict[str, Any]) -> dict[str, Any] | None:
        """The pipeline a status joins, as GitLab picks it: ``pipeline_id``'s (None when
        there is no such pipeline on ``sha``), else the newest on ``sha`` and ``ref`` (the
        ref defaults to the default branch), else a new external pipeline of its own,
        which gates no merge-request pipeline."""
        every = [p for mr in self.mrs.values() for p in mr.pipelines] + self.external_pipelines
        if data.get("pipeline_id") is not None:
            wanted = int(data["pipeline_id"])
            return next((p for p in every if p["id"] == wanted and p["sha"] == sha), None)
        ref = data.get("ref") or "main"
        found = [p for p in every if p["sha"] == sha and p["ref"] == ref]
        if found:
            return max(found, key=lambda p: int(p["id"]))
        made = {"id": self._next_id(), "sha": sha, "ref": ref, "source": "external"}
        self.external_pipelines.append(made)
        return made

    def merge_blocked(self, iid: int) -> bool:
        """Whether GitLab's "pipelines must succeed" blocks the MR: a status that is not
        success in its head pipeline."""
        mr = self.mrs[iid]
        if not mr.pipelines:
            return False
        head = mr.pipelines[-1]["id"]
        return any(
            s["status"] != "success" for s in self.status_records if s["pipeline_id"] == head
        )

    def _approvals(self, method: str, mr: MergeRequest, sub: str, data: dict[str, Any]) -> Reply:
        """Merge request approvals (the MR Approvals API): ``approve`` with ``sha`` other
        than the head is 409, a second approval by one user 401, ``unapprove`` without an
        approval 404; ``approval_state`` is 404 without approval rules (Free)."""
        me = self.bot_username
        user = {"username": me, "id": 7}
        approved = [{"user": {"username": u}} for u in mr.approved_by]
        if sub == "/approval_state" and method == "GET":
            if mr.approval_rules is None:
                return _json(404, {"message": "404 Not found"})
            rules = [
                {
                    "name": rule["name"],
                    "eligible_approvers": [{"username": u} for u in rule["eligible_approvers"]],
                    "approved": any(u in mr.approved_by for u in rule["eligible_approvers"]),
                }
                for rule in mr.approval_rules
            ]
            return _json(200, {"approval_rules_overwritten": False, "rules": rules})
        if sub == "/approvals" and method == "GET":
            return _json(200, {"approved": bool(approved), "approved_by": approved})
        if sub == "/approve" and method == "POST":
            if set(data) - {"sha", "approval_password"}:
                return self._refuse(method, "/approve", f"unknown fields {sorted(data)}")
            if data.get("sha") not in (None, mr.head):
                return _json(409, {"message": "SHA does not match HEAD of source branch"})
            if me in mr.approved_by:
                return _json(401, {"message": "401 Unauthorized"})
            mr.approved_by[me] = mr.head
            return _json(201, {"approved_by": [*approved, {"user": user}]})
        if sub == "/unapprove" and method == "POST":
            if mr.approved_by.pop(me, None) is None:
                return _json(404, {"message": "404 Not found"})
            return _json(201, {"approved_by": []})
        return _json(404, {"message": "404 Not found"})

    def _merge_request(
        self, method: str, mr: MergeRequest, sub: str, q: dict[str, str], data: dict[str, Any]
    ) -> Reply:
        if sub == "" and method == "GET":
            data = self._mr_json(mr)
            mr.unprepared_reads -= 1
            return _json(200, data)
        if sub == "" and method == "PUT":
            unknown = set(data) - {"description", "title", "add_labels", "labels"}
            if unknown:
                return self._refuse(method, "/merge_requests", f"unknown fields {sorted(unknown)}")
            mr.description = data.get("description", mr.description)
            added = [n for n in str(data.get("add_labels") or "").split(",") if n]
            mr.labels = list(dict.fromkeys([*mr.labels, *added]))
            return _json(200, self._mr_json(mr))
        if sub == "/diffs" and mr.unprepared_reads > 0:
            return _json(200, [])
        if sub == "/diffs":
            return _json(200, _page(self._file_diffs(self._diff_refs(mr)["base_sha"], mr.head), q))
        if sub == "/notes" and method == "GET":
            listed = [_public(n) for n in self.notes if n["_mr"] == mr.iid]
            return _json(200, _page(listed, q))
        if sub == "/notes" and method == "POST":
            if not isinstance(data.get("body"), str) or not data["body"]:
                return self._refuse(method, "/notes", "body is missing")
            self.notifications += 1
            return _json(201, _public(self._note(mr.iid, data["body"], self.bot_username)))
        if sub.startswith("/draft_notes"):
            return self._draft_notes(method, mr, sub, q, data)
        if sub in {"/approval_state", "/approvals", "/approve", "/unapprove"}:
            return self._approvals(method, mr, sub, data)
        if sub == "/discussions" and method == "GET":
            return _json(200, _page(self.discussions(mr.iid), q))
        if sub == "/discussions" and method == "POST":
            return self._discussion(mr, data)
        if (m := re.fullmatch(r"/discussions/(\w+)/notes", sub)) and method == "POST":
            if not any(n["_discussion"] == m.group(1) for n in self.notes):
                return _json(404, {"message": "404 Discussion Not Found"})
            note = self._note(
                mr.iid, data.get("body", ""), self.bot_username, discussion=m.group(1)
            )
            self.notifications += 1
            return _json(201, _public(note))
        if (m := re.fullmatch(r"/discussions/(\w+)/notes/(\d+)", sub)) and method == "DELETE":
            self.notes = [n for n in self.notes if n["id"] != int(m.group(2))]
            return 204, {}, b""
        if (m := re.fullmatch(r"/discussions/(\w+)", sub)) and method == "PUT":
            for note in self.notes:
                if note["_discussion"] == m.group(1) and note["resolvable"]:
                    note["resolved"] = bool(data.get("resolved"))
            return _json(200, next(d for d in self.discussions(mr.iid) if d["id"] == m.group(1)))
        if m := re.fullmatch(r"/notes/(\d+)/award_emoji", sub):
            note_id = int(m.group(1))
            if not any(n["id"] == note_id for n in self.notes):
                return _json(404, {"message": "404 Note Not Found"})
            if method == "GET":
                return _json(200, _page(self.awards.get(note_id, []), q))
            given = self.awards.setdefault(note_id, [])
            if any(
                a["name"] == data.get("name") and a["user"]["username"] == self.bot_username
                for a in given
            ):
                return _json(404, {"message": "404 Award Emoji Name has already been taken"})
            award = {
                "id": self._next_id(),
                "name": data["name"],
                "user": {"username": self.bot_username},
            }
            given.append(award)
            return _json(201, award)
        return _json(404, {"message": "404 Not found"})

    def _discussion(self, mr: MergeRequest, data: dict[str, Any]) -> Reply:
        if not isinstance(data.get("body"), str) or not data["body"]:
            return self._refuse("POST", "/discussions", "body is missing")
        position = data.get("position")
        refused = self._refused_position(mr, position, "/discussions")
        if refused is not None:
            return refused
        self.notifications += 1
        note = self._note(mr.iid, data["body"], self.bot_username, position=position)
        found = next(d for d in self.discussions(mr.iid) if d["id"] == note["_discussion"])
        return _json(201, found)

    def _refused_position(self, mr: MergeRequest, position: Any, route: str) -> Reply | None:
        """GitLab's answer to a note whose ``position`` it refuses, or None."""
        if position is None:
            return None
        required = {"base_sha", "start_sha", "head_sha", "position_type"}
        if not isinstance(position, dict) or required - set(position):
            return self._refuse("POST", route, "position is missing fields")
        problem = self._position_problem(mr, position)
        made = sum(1 for n in self.notes if n["position"] and n["_mr"] == mr.iid)
        made += sum(1 for d in self.drafts if d["position"] and d["_mr"] == mr.iid)
        if self.refuse_discussions_after is not None and made >= self.refuse_discussions_after:
            problem = LINE_CODE
        return _json(400, {"message": problem}) if problem else None

    def _draft_notes(
        self, method: str, mr: MergeRequest, sub: str, q: dict[str, str], data: dict[str, Any]
    ) -> Reply:
        """GitLab's Draft Notes API: the bot's drafts on the MR, made, listed, deleted and
        published together (one notification for all)."""
        if not self.drafts_supported:
            return _json(404, {"message": "404 Not found"})
        mine = [d for d in self.drafts if d["_mr"] == mr.iid]
        if sub == "/draft_notes" and method == "GET":
            return _json(200, _page([_public(d) for d in mine], q))
        if sub == "/draft_notes" and method == "POST":
            if not isinstance(data.get("note"), str) or not data["note"]:
                return self._refuse(method, "/draft_notes", "note is missing")
            position = data.get("position")
            refused = self._refused_position(mr, position, "/draft_notes")
            if refused is not None:
                return refused
            draft = {"id": self._next_id(), "note": data["note"], "position": position}
            self.drafts.append({**draft, "_mr": mr.iid})
            return _json(201, draft)
        if (m := re.fullmatch(r"/draft_notes/(\d+)", sub)) and method == "DELETE":
            if not any(d["id"] == int(m.group(1)) for d in mine):
                return _json(404, {"message": "404 Not found"})
            self.drafts = [d for d in self.drafts if d["id"] != int(m.group(1))]
            return 204, {}, b""
        if sub == "/draft_notes/bulk_publish" and method == "POST":
            for draft in mine:
                self._note(mr.iid, draft["note"], self.bot_username, position=draft["position"])
            self.drafts = [d for d in self.drafts if d["_mr"] != mr.iid]
            self.notifications += 1 if mine else 0
            return 204, {}, b""
        return _json(404, {"message": "404 Not found"})


def _unsecret(hook: dict[str, Any]) -> dict[str, Any]:
    """A webhook as GitLab shows it: never its secret token."""
    return {k: v for k, v in hook.items() if k != "token"}


def _public(note: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in note.items() if not k.startswith("_")}


def _page(items: list[Any], q: dict[str, str]) -> list[Any]:
    per_page, page = int(q.get("per_page", "20")), int(q.get("page", "1"))
    return items[(page - 1) * per_page : page * per_page]


def _json(status: int, data: Any) -> Reply:
    return status, {"content-type": "application/json"}, json.dumps(data).encode()


@contextmanager
def running_fake_gitlab(
    repo: GitRepo, path: str, project_id: int, token: str, tls: ssl.SSLContext | None = None
) -> Iterator[FakeGitLab]:
    """The fake GitLab on 127.0.0.1; over TLS with ``tls`` (a server context)."""
    fake = FakeGitLab(repo=repo, path=path, project_id=project_id, token=token)
    with serving_fake(fake, tls) as base:
        fake.base_url = base
        yield fake


def _names(line: DiffLine, old: object, new: object) -> bool:
    """Whether a position's ``old_line`` and ``new_line`` name ``line`` as GitLab wants:
    the new line alone for an added line, the old alone for a removed one, both else."""
    if line.kind is LineKind.ADDED:
        return (old, new) == (None, line.new_no)
    if line.kind is LineKind.REMOVED:
        return (old, new) == (line.old_no, None)
    return (old, new) == (line.old_no, line.new_no)


def _line_codes(diff: FileDiff) -> dict[str, DiffLine]:
    """GitLab's line codes of a file's diff lines: the path's SHA-1, then the line's old
    and new positions in its hunk (an added line's old position is the next old line)."""
    digest = hashlib.sha1(diff.path.encode()).hexdigest()
    codes = {}
    for hunk in diff.hunks:
        old_pos, new_pos = hunk.old_start, hunk.new_start
        for line in hunk.lines:
            codes[f"{digest}_{old_pos}_{new_pos}"] = line
            old_pos += 0 if line.kind is LineKind.ADDED else 1
            new_pos += 0 if line.kind is LineKind.REMOVED else 1
    return codes

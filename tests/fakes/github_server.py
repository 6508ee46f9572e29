"""A fake GitHub REST API on 127.0.0.1, serving one real git repository's pull request.

It checks the App's JWT (RS256, issuer = app id) when issuing installation tokens and the
installation token on every repository call, serves the PR, its diff (or 406), files,
contents, compare and tarball from a real git repository, and accepts reviews only when
every inline comment sits on a line of the PR's diff, answering 422 otherwise, as GitHub
does. ``fail_next(method, path_suffix, [502])`` scripts failures; with ``apply=True`` the
request takes effect before the failure is returned (a response lost in transit).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tarfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import jwt

from app.diff.parse import parse_diff
from tests.fakes.git_http import basic_credentials, git_backend
from tests.fakes.github_schema import body_problem, conversion, conversion_problem, manifest_problem
from tests.fakes.loopback import serving_fake
from tests.gitrepo import GitRepo
from tests.keys import rsa_key_pair

#: GitHub lists at most this many files in a comparison.
COMPARE_MAX_FILES = 300


@dataclass
class PullState:
    number: int
    base: str
    head: str
    title: str = "Apply coupons at checkout"
    body: str = "Uses the discount helper from pricing."
    draft: bool = False
    author: str = "octocat"
    labels: list[str] = field(default_factory=list)
    base_ref: str = "main"
    head_ref: str = "coupons"


@dataclass
class FakeGitHub:
    repo: GitRepo
    full_name: str
    app_id: int
    public_key: str
    pulls: dict[int, PullState] = field(default_factory=dict)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    reactions: list[tuple[int, str]] = field(default_factory=list)
    comments: list[dict[str, Any]] = field(default_factory=list)  # on PR conversations
    # inline review comments and replies, as GitHub lists them; reactions on them by
    # comment id; the root comment ids of resolved review threads (GraphQL)
    review_comments: list[dict[str, Any]] = field(default_factory=list)
    review_reactions: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    resolved_threads: set[int] = field(default_factory=set)
    labels: list[str] = field(default_factory=list)  # the repository's labels
    mutations_fail: bool = False  # GraphQL mutations answer with errors
    # > 0: the tarball is an uncompressed tar of one random file this big, streamed
    # (chunked) as it is made, so a test can see that the bot holds none of it in memory
    tarball_stream_bytes: int = 0
    bot_login: str = "reviewbot[bot]"
    check_runs: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)
    tokens_issued: int = 0
    diff_too_large: bool = False
    permissions: dict[str, str] = field(default_factory=dict)
    webhook_url: str = ""  # where deliver() and redeliveries POST
    webhook_secret: str = ""
    deliveries: list[dict[str, Any]] = field(default_factory=list)  # attempts, oldest first
    refused: list[tuple[str, str, str]] = field(default_factory=list)  # bodies GitHub refuses
    manifests: dict[str, dict[str, Any]] = field(default_factory=dict)  # by one-time code
    _tokens: set[str] = field(default_factory=set)
    read_only_tokens: set[str] = field(default_factory=set)
    _failures: list[tuple[str, str, int, bool, float]] = field(default_factory=list)
    held: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    base_url: str = ""

    def fail_next(
        self,
        method: str,
        suffix: str,
        statuses: list[int],
        apply: bool = False,
        hold_seconds: float = 0.0,
    ) -> None:
        """Answer the next matching requests with ``statuses``; with ``hold_seconds``, each
        is held that long first (``held`` is set while one is being held)."""
        with self._lock:
            self._failures += [(method, suffix, s, apply, hold_seconds) for s in statuses]

    def _scripted(self, method: str, path: str) -> tuple[int, bool] | None:
        with self._lock:
            found = next(
                (f for f in self._failures if f[0] == method and path.endswith(f[1])), None
            )
            if found is None:
                return None
            self._failures.remove(found)
        _, _, status, apply, hold = found
        if hold:
            self.held.set()
            time.sleep(hold)
        return status, apply

    def deliver(
        self, event: str, payload: dict[str, Any], guid: str | None = None, redelivery: bool = False
    ) -> int:
        """POST a signed webhook to ``webhook_url`` as GitHub does, and log the attempt as
        GitHub's delivery log would; returns the status code (0: no answer)."""
        import uuid

        import httpx

        from tests.webhooks import headers

        guid = guid or str(uuid.uuid4())
        body = json.dumps(payload).encode()
        try:
            status = httpx.post(
                self.webhook_url,
                content=body,
                headers=headers(self.webhook_secret, body, event, guid),
                timeout=10,
            ).status_code
        except httpx.HTTPError:
            status = 0
        self.log_delivery(event, payload, guid, status, redelivery)
        return status

    def log_delivery(
        self, event: str, payload: dict[str, Any], guid: str, status: int, redelivery: bool
    ) -> None:
        """Add one attempt to the delivery log that ``GET /app/hook/deliveries`` lists."""
        with self._lock:
            self.deliveries.append(
                {
                    "id": len(self.deliveries) + 1,
                    "guid": guid,
                    "delivered_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "redelivery": redelivery,
                    "status_code": status,
                    "status": "OK" if status and status < 300 else "Invalid HTTP Response",
                    "event": event,
                    "action": payload.get("action"),
                    "_payload": payload,
                }
            )

    def _hook(
        self, method: str, path: str, query: dict[str, list[str]]
    ) -> tuple[int, dict[str, str], bytes]:
        """``GET /app/hook/deliveries`` (newest first, cursor-paged) and ``POST
        /app/hook/deliveries/{id}/attempts`` (redelivered from a thread, as GitHub does)."""
        if path == "/app/hook/deliveries" and method == "GET":
            per_page = int(query.get("per_page", ["30"])[0])
            start = int(query.get("cursor", ["0"])[0])
            with self._lock:
                newest_first = list(reversed(self.deliveries))
            page = [
                {k: v for k, v in d.items() if not k.startswith("_")}
                for d in newest_first[start : start + per_page]
            ]
            out: dict[str, str] = {"content-type": "application/json"}
            if start + per_page < len(newest_first):
                out["link"] = (
                    f"<{self.base_url}/app/hook/deliveries?per_page={per_page}"
                    f'&cursor={start + per_page}>; rel="next"'
                )
            return 200, out, json.dumps(page).encode()
        if (m := re.fullmatch(r"/app/hook/deliveries/(\d+)/attempts", path)) and method == "POST":
            with self._lock:
                found = [d for d in self.deliveries if d["id"] == int(m.group(1))]
            if not found:
                return _json(404, {"message": "Not Found"})
            again = found[0]
            threading.Thread(
                target=self.deliver,
                args=(again["event"], again["_payload"], again["guid"], True),
                daemon=True,
            ).start()
            return _json(202, {})
        return _json(404, {"message": "Not Found"})

    def git(self, *args: str) -> bytes:
        return subprocess.run(
            ["git", "-C", str(self.repo.root), *args], capture_output=True, check=False
        ).stdout

    # -- routes ------------------------------------------------------------------------

    def handle(
        self, method: str, raw_path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        url = urlparse(raw_path)
        path, query = url.path, parse_qs(url.query)
        self.requests.append((method, path))
        match = re.fullmatch(r"/app/installations/(\d+)/access_tokens", path)
        if match and method == "POST":
            return self._token(headers)
        if path == "/app" and method == "GET":
            claims = self._app_jwt(headers)
            if claims is None:
                return _json(401, {"message": "A JSON web token could not be decoded"})
            return _json(200, {"id": self.app_id, "slug": "reviewbot", "name": "reviewbot"})
        if path == "/app/installations" and method == "GET":
            if self._app_jwt(headers) is None:
                return _json(401, {"message": "A JSON web token could not be decoded"})
            account = {"login": self.full_name.split("/")[0], "type": "Organization"}
            return _json(200, [{"id": 99, "account": account, "app_id": self.app_id}])
        if path.startswith("/app/hook/"):
            if self._app_jwt(headers) is None:
                return _json(401, {"message": "A JSON web token could not be decoded"})
            return self._hook(method, path, query)
        if method == "POST" and re.fullmatch(r"(/organizations/[\w-]+)?/settings/apps/new", path):
            return self._new_app(path, query, body)
        match = re.fullmatch(r"/app-manifests/([\w-]+)/conversions", path)
        if match and method == "POST":
            return self._convert_manifest(match.group(1))
        if path.startswith(f"/{self.full_name}.git/"):
            return self._git(method, path, url.query, headers, body)
        if not self._authorized(headers):
            return _json(401, {"message": "Bad credentials"})
        if method != "GET" and _bearer(headers) in self.read_only_tokens:
            return _json(403, {"message": "Resource not accessible by integration"})
        if path == "/graphql" and method == "POST":
            scripted = self._scripted(method, path)
            if scripted:
                return _json(scripted[0], {"message": "scripted failure"})
            return self._graphql(json.loads(body))
        prefix = f"/repos/{self.full_name}"
        if not path.startswith(prefix):
            return _json(404, {"message": "Not Found"})
        rest = path[len(prefix) :]
        scripted = self._scripted(method, rest)
        if scripted and not scripted[1]:
            status = scripted[0]
            if status == 429:  # a secondary rate limit, as GitHub words it
                code, out, data = _json(
                    429, {"message": "You have exceeded a secondary rate limit."}
                )
                return code, {**out, "retry-after": "1"}, data
            return _json(status, {"message": "scripted failure"})
        kind = _body_kind(method, rest)
        if kind is not None:
            problem = body_problem(kind, json.loads(body or b"null"))
            if problem:
                self.refused.append((method, rest, problem))
                return _json(422, {"message": "Invalid request.", "errors": [problem]})
        number = re.match(r"/(?:pulls|issues)/(\d+)", rest)
        if number and int(number.group(1)) not in self.pulls:
            return _json(404, {"message": "Not Found"})
        status, out_headers, payload = self._route(method, rest, query, headers, body)
        if scripted:
            return _json(scripted[0], {"message": "scripted failure after applying"})
        return status, out_headers, payload

    def _route(
        self,
        method: str,
        rest: str,
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: bytes,
    ) -> tuple[int, dict[str, str], bytes]:
        accept = headers.get("accept", "")
        if rest == "" and method == "GET":
            return _json(200, {"full_name": self.full_name, "default_branch": "main"})
        if (m := re.fullmatch(r"/pulls/(\d+)", rest)) and method == "PATCH":
            pr = self.pulls[int(m.group(1))]
            data = json.loads(body)
            pr.body = data.get("body", pr.body)
            pr.title = data.get("title", pr.title)
            return _json(200, {"number": pr.number, "title": pr.title, "body": pr.body})
        if rest == "/labels" and method == "GET":
            listed = [{"name": name, "color": "ededed"} for name in self.labels]
            return _json(200, listed if query.get("page", ["1"])[0] == "1" else [])
        if (m := re.fullmatch(r"/issues/(\d+)/labels", rest)) and method == "POST":
            pr = self.pulls[int(m.group(1))]
            names = json.loads(body)["labels"]
            unknown = [n for n in names if n not in self.labels]
            if unknown:
                return _json(422, {"message": "Validation Failed", "errors": unknown})
            pr.labels = list(dict.fromkeys([*pr.labels, *names]))
            return _json(200, [{"name": name} for name in pr.labels])
        if m := re.fullmatch(r"/pulls/(\d+)", rest):
            pr = self.pulls[int(m.group(1))]
            if "diff" in accept:
                if self.diff_too_large:
                    return _json(
                        406,
                        {"message": "Sorry, the diff exceeded the maximum number of files (300)."},
                    )
                return 200, {"content-type": "text/plain"}, self.git("diff", "-M", pr.base, pr.head)
            return _json(
                200,
                {
                    "number": pr.number,
                    "title": pr.title,
                    "body": pr.body,
                    "draft": pr.draft,
                    "state": "open",
                    "head": {"sha": pr.head, "ref": pr.head_ref},
                    "base": {"sha": pr.base, "ref": pr.base_ref},
                    "user": {"login": pr.author, "type": "Bot" if "[bot]" in pr.author else "User"},
                    "labels": [{"name": name} for name in pr.labels],
                },
            )
        if m := re.fullmatch(r"/pulls/(\d+)/files", rest):
            pr = self.pulls[int(m.group(1))]
            return _json(200, self._files(pr) if query.get("page", ["1"])[0] == "1" else [])
        if m := re.fullmatch(r"/pulls/(\d+)/reviews", rest):
            number = int(m.group(1))
            if method == "GET":
                mine = [r for r in self.reviews if r["pr"] == number]
                return _json(200, mine if query.get("page", ["1"])[0] == "1" else [])
            return self._create_review(number, json.loads(body))
        if m := re.fullmatch(r"/compare/([0-9a-f]+)\.\.\.([0-9a-f]+)", rest):
            if "diff" in accept:
                return (
                    200,
                    {"content-type": "text/plain"},
                    self.git("diff", "-M", m.group(1), m.group(2)),
                )
            return self._comparison(m.group(1), m.group(2))
        if (m := re.fullmatch(r"/commits/(.+)", rest)) and "sha" in accept:
            sha = self.git("rev-parse", "--verify", "-q", f"{m.group(1)}^{{commit}}").strip()
            if not sha:
                return _json(404, {"message": "Not Found"})
            return 200, {"content-type": "application/vnd.github.sha"}, sha
        if m := re.fullmatch(r"/contents/(.+)", rest):
            ref = query.get("ref", ["HEAD"])[0]
            done = subprocess.run(
                ["git", "-C", str(self.repo.root), "show", f"{ref}:{m.group(1)}"],
                capture_output=True,
                check=False,
            )
            if done.returncode != 0:
                return _json(404, {"message": "Not Found"})
            return 200, {"content-type": "application/vnd.github.raw"}, done.stdout
        if (m := re.fullmatch(r"/tarball/(.+)", rest)) and self.tarball_stream_bytes:
            return (
                200,
                {"content-type": "application/x-tar"},
                _random_tar(self.tarball_stream_bytes),
            )  # type: ignore[return-value]
        if m := re.fullmatch(r"/tarball/(.+)", rest):
            ref = m.group(1)
            sha = self.git("rev-parse", ref).decode().strip()
            prefix = f"{self.full_name.replace('/', '-')}-{sha[:7]}/"
            return (
                200,
                {"content-type": "application/x-gzip"},
                self.git("archive", "--format=tar.gz", f"--prefix={prefix}", sha),
            )
        if rest == "/check-runs" and method == "POST":
            run = {**json.loads(body), "id": 500 + len(self.check_runs)}
            self.check_runs.append(run)
            return _json(201, run)
        if (m := re.fullmatch(r"/check-runs/(\d+)", rest)) and method == "PATCH":
            run = next(r for r in self.check_runs if r["id"] == int(m.group(1)))
            run.update(json.loads(body))
            return _json(200, run)
        if m := re.fullmatch(r"/issues/(\d+)/comments", rest):
            number = int(m.group(1))
            if method == "POST":
                comment = {
                    "id": 900 + len(self.comments),
                    "pr": number,
                    "body": json.loads(body)["body"],
                }
                self.comments.append(comment)
                return _json(201, comment)
            mine = [c for c in self.comments if c["pr"] == number]
            return _json(200, mine if query.get("page", ["1"])[0] == "1" else [])
        if m := re.fullmatch(r"/pulls/(\d+)/comments", rest):
            number = int(m.group(1))
            mine = [c for c in self.review_comments if c["pr"] == number]
            return _json(200, mine if query.get("page", ["1"])[0] == "1" else [])
        if m := re.fullmatch(r"/pulls/comments/(\d+)", rest):
            found = [c for c in self.review_comments if c["id"] == int(m.group(1))]
            return _json(200, found[0]) if found else _json(404, {"message": "Not Found"})
        if m := re.fullmatch(r"/pulls/comments/(\d+)/reactions", rest):
            listed = self.review_reactions.get(int(m.group(1)), [])
            return _json(200, listed if query.get("page", ["1"])[0] == "1" else [])
        if (m := re.fullmatch(r"/pulls/(\d+)/comments/(\d+)/replies", rest)) and method == "POST":
            return self._reply(int(m.group(1)), int(m.group(2)), json.loads(body))
        if m := re.fullmatch(r"/issues/comments/(\d+)/reactions", rest):
            self.reactions.append((int(m.group(1)), json.loads(body)["content"]))
            return _json(201, {"id": 1})
        if m := re.fullmatch(r"/collaborators/([^/]+)/permission", rest):
            return _json(200, {"permission": self.permissions.get(m.group(1), "read")})
        return _json(404, {"message": "Not Found"})

    def _git(
        self, method: str, path: str, query: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """git's smart HTTP protocol, as github.com serves it at ``/owner/name.git``: the
        real ``git http-backend`` over the test repository, behind GitHub's check of the
        installation token (HTTP Basic, user ``x-access-token``)."""
        user, token = basic_credentials(headers)
        if user != "x-access-token" or token not in self._tokens:
            return 401, {"www-authenticate": 'Basic realm="GitHub"'}, b"Unauthorized\n"
        scripted = self._scripted(method, path)
        if scripted:
            return scripted[0], {"content-type": "text/plain"}, b"scripted failure\n"
        rest = path[len(f"/{self.full_name}.git") :]
        return git_backend(self.repo.root, rest, method, query, headers, body)

    def _comparison(self, base: str, head: str) -> tuple[int, dict[str, str], bytes]:
        """GitHub's JSON comparison: ``status`` and at most ``COMPARE_MAX_FILES`` files
        (three-dot: from the merge base), 404 for an unknown commit."""
        ancestor = [
            subprocess.run(
                ["git", "-C", str(self.repo.root), "merge-base", "--is-ancestor", a, b],
                capture_output=True,
                check=False,
            ).returncode
            for a, b in ((base, head), (head, base))
        ]
        if 128 in ancestor:
            return _json(404, {"message": "Not Found"})
        sha = self.git("rev-parse", base, head).split()
        status = (
            "identical"
            if sha[0] == sha[1]
            else "ahead"
            if ancestor[0] == 0
            else "behind"
            if ancestor[1] == 0
            else "diverged"
        )
        statuses = {"A": "added", "M": "modified", "D": "removed", "R": "renamed", "C": "copied"}
        files = []
        listed = self.git("diff", "--name-status", "-M", f"{base}...{head}").decode()
        for line in listed.splitlines():
            code, *paths = line.split("\t")
            entry = {"filename": paths[-1], "status": statuses.get(code[0], "changed")}
            if code[0] == "R":
                entry["previous_filename"] = paths[0]
            files.append(entry)
        return _json(200, {"status": status, "files": files[:COMPARE_MAX_FILES]})

    def _create_review(
        self, number: int, data: dict[str, Any]
    ) -> tuple[int, dict[str, str], bytes]:
        pr = self.pulls[number]
        diffs = {d.path: d for d in parse_diff(self.git("diff", "-M", pr.base, pr.head))}
        for comment in data.get("comments", []):
            diff = diffs.get(comment["path"])
            if diff is None or comment["line"] not in diff.commentable_lines:
                return _json(
                    422,
                    {
                        "message": "Unprocessable Entity",
                        "errors": ["Pull request review thread line must be part of the diff"],
                    },
                )
            start = comment.get("start_line")
            hunk = next(h for h in diff.hunks if comment["line"] in h.new_lines)
            if start is not None and not (start < comment["line"] and start in hunk.new_lines):
                return _json(
                    422,
                    {
                        "message": "Unprocessable Entity",
                        "errors": ["Pull request review thread start line must be in the hunk"],
                    },
                )
        review_id = 1000 + len(self.reviews)
        for comment in data.get("comments", []):
            self._add_review_comment(
                number,
                review_id,
                comment["path"],
                comment["line"],
                comment["body"],
                self.bot_login,
                "Bot",
                start_line=comment.get("start_line"),
            )
        review = {
            "id": review_id,
            "pr": number,
            "commit_id": data.get("commit_id"),
            "body": data.get("body", ""),
            "event": data.get("event"),
            "comments": data.get("comments", []),
        }
        self.reviews.append(review)
        return _json(200, review)

    def _add_review_comment(
        self,
        number: int,
        review_id: int | None,
        path: str,
        line: int,
        body: str,
        login: str,
        kind: str = "User",
        in_reply_to: int | None = None,
        start_line: int | None = None,
    ) -> dict[str, Any]:
        """An inline comment as GitHub stores and lists it (``diff_hunk`` up to its line;
        ``original_*`` as of the head it was made on)."""
        pr = self.pulls[number]
        hunk = ""
        for diff in parse_diff(self.git("diff", "-M", pr.base, pr.head)):
            if diff.path == path:
                for h in diff.hunks:
                    if any(ln.new_no == line for ln in h.lines):
                        shown = [ln for ln in h.lines if ln.new_no is None or ln.new_no <= line]
                        hunk = "\n".join(f"{ln.kind}{ln.text}" for ln in shown)
        comment = {
            "id": 5000 + len(self.review_comments),
            "pr": number,
            "pull_request_review_id": review_id,
            "path": path,
            "line": line,
            "original_line": line,
            "start_line": start_line,
            "original_start_line": start_line,
            "side": "RIGHT",
            "commit_id": pr.head,
            "original_commit_id": pr.head,
            "diff_hunk": hunk,
            "body": body,
            "user": {"login": login, "type": kind},
        }
        if in_reply_to is not None:
            comment["in_reply_to_id"] = in_reply_to
        self.review_comments.append(comment)
        return comment

    def add_reply(self, parent_id: int, body: str, login: str) -> dict[str, Any]:
        """A person replies in the thread of review comment ``parent_id``."""
        parent = next(c for c in self.review_comments if c["id"] == parent_id)
        return self._add_review_comment(
            parent["pr"], None, parent["path"], parent["line"], body, login, "User", parent_id
        )

    def _reply(
        self, number: int, parent_id: int, data: dict[str, Any]
    ) -> tuple[int, dict[str, str], bytes]:
        """``POST /pulls/{n}/comments/{id}/replies``: only ``body``, on a top-level
        comment of that PR (GitHub refuses replies to replies)."""
        parent = next((c for c in self.review_comments if c["id"] == parent_id), None)
        if parent is None or parent["pr"] != number:
            return _json(404, {"message": "Not Found"})
        if set(data) != {"body"} or not isinstance(data["body"], str) or not data["body"]:
            return _json(422, {"message": "Validation Failed", "errors": ["body is required"]})
        if "in_reply_to_id" in parent:
            return _json(422, {"message": "Validation Failed", "errors": ["reply to a reply"]})
        reply = self._add_review_comment(
            number,
            None,
            parent["path"],
            parent["line"],
            data["body"],
            self.bot_login,
            "Bot",
            parent_id,
        )
        return _json(201, reply)

    def _graphql(self, data: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        """What reviewbot sends: a PR's review threads, and ``resolveReviewThread`` (the
        mutation as GitHub's schema has it: ``input: {threadId}``, ``thread`` back)."""
        query, variables = data.get("query", ""), data.get("variables") or {}
        if "mutation" in query:
            if self.mutations_fail:
                error = {"message": "Resource not accessible by integration", "type": "FORBIDDEN"}
                return _json(200, {"errors": [error]})
            return self._resolve_thread(query, variables)
        if "reviewThreads" not in query or not isinstance(variables.get("number"), int):
            return _json(200, {"errors": [{"message": "unsupported query", "type": "TEST"}]})
        roots = [
            c
            for c in self.review_comments
            if c["pr"] == variables["number"] and "in_reply_to_id" not in c
        ]
        nodes = [
            {
                "id": _thread_id(c["id"]),
                "isResolved": c["id"] in self.resolved_threads,
                "comments": {"nodes": [{"databaseId": c["id"]}]},
            }
            for c in roots
        ]
        threads = {"pageInfo": {"hasNextPage": False, "endCursor": None}, "nodes": nodes}
        return _json(200, {"data": {"repository": {"pullRequest": {"reviewThreads": threads}}}})

    def _resolve_thread(
        self, query: str, variables: dict[str, Any]
    ) -> tuple[int, dict[str, str], bytes]:
        shape = re.sub(r"\s+", " ", query).strip()
        expected = (
            "mutation($threadId: ID!) { resolveReviewThread(input: {threadId: $threadId})"
            " { thread { id isResolved } } }"
        )
        thread = str(variables.get("threadId", ""))
        root = next((c["id"] for c in self.review_comments if _thread_id(c["id"]) == thread), None)
        if shape != expected or root is None:
            message = "Could not resolve to a node" if root is None else "unsupported mutation"
            return _json(200, {"errors": [{"message": message, "type": "NOT_FOUND"}]})
        self.resolved_threads.add(root)
        resolved = {"thread": {"id": thread, "isResolved": True}}
        return _json(200, {"data": {"resolveReviewThread": resolved}})

    def _files(self, pr: PullState) -> list[dict[str, Any]]:
        files = []
        for diff in parse_diff(self.git("diff", "-M", pr.base, pr.head)):
            text = self.git("diff", "-M", pr.base, pr.head, "--", diff.old_path, diff.path).decode()
            patch = text[text.index("@@") :] if "@@" in text else None
            status = {"deleted": "removed"}.get(diff.status, diff.status)
            files.append(
                {
                    "filename": diff.path,
                    "previous_filename": diff.old_path,
                    "status": status,
                    "patch": patch.rstrip("\n") if patch else None,
                }
            )
        return files

    def _new_app(
        self, path: str, query: dict[str, list[str]], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """GitHub's "new App" page after its button is pressed: the form's manifest
        makes an App (its key pair made here), and the browser is sent to the manifest's
        ``redirect_url`` with a one-time code and the ``state`` it came with."""
        form = parse_qs(body.decode())
        app_manifest = json.loads(form["manifest"][0])
        problem = manifest_problem(app_manifest)
        if problem:
            self.refused.append(("POST", path, problem))
            return 422, {"content-type": "text/html"}, problem.encode()
        code = f"code{len(self.manifests):04d}"
        owner = path.split("/")[2] if path.startswith("/organizations/") else "octocat"
        self.manifests[code] = {**app_manifest, "owner": owner}
        redirect = (
            app_manifest["redirect_url"]
            + "?"
            + urlencode({"code": code, "state": query.get("state", [""])[0]})
        )
        return 302, {"location": redirect}, b""

    def _convert_manifest(self, code: str) -> tuple[int, dict[str, str], bytes]:
        """``POST /app-manifests/{code}/conversions``: the App the code stands for, with
        its credentials, once (then this fake's App is that one)."""
        with self._lock:
            app_manifest = self.manifests.pop(code, None)
        if app_manifest is None:
            return _json(404, {"message": "Not Found"})
        private, public = rsa_key_pair()
        with self._lock:
            self.app_id, self.public_key = self.app_id + 1000, public
            self.webhook_url = app_manifest["hook_attributes"]["url"]
            self.webhook_secret = f"whsec_{os.urandom(16).hex()}"
        answer = conversion(self.app_id, app_manifest, self.base_url, private)
        answer["webhook_secret"] = self.webhook_secret
        assert conversion_problem(answer) is None, conversion_problem(answer)
        return _json(201, answer)

    def _app_jwt(self, headers: dict[str, str]) -> dict[str, Any] | None:
        """The App JWT's claims when it is valid for this App, else None."""
        auth = headers.get("authorization", "")
        try:
            claims = jwt.decode(auth.removeprefix("Bearer "), self.public_key, algorithms=["RS256"])
        except jwt.PyJWTError:
            return None
        return claims if str(claims.get("iss")) == str(self.app_id) else None

    def _token(self, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if self._app_jwt(headers) is None:
            return _json(401, {"message": "A JSON web token could not be decoded"})
        with self._lock:
            self.tokens_issued += 1
            token = f"ghs_fake{self.tokens_issued:04d}"
            self._tokens.add(token)
        expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
        return _json(201, {"token": token, "expires_at": expires, "permissions": {}})

    def _authorized(self, headers: dict[str, str]) -> bool:
        return _bearer(headers) in self._tokens

    def accept_token(self, token: str, read_only: bool = False) -> None:
        """Accept ``token`` as an installation's (the Actions token, a personal token);
        ``read_only``: it may read, and every write is refused (403) as GitHub refuses a
        token without the permission."""
        self._tokens.add(token)
        if read_only:
            self.read_only_tokens.add(token)


def _bearer(headers: dict[str, str]) -> str:
    auth = headers.get("authorization", "")
    return auth.split(" ", 1)[1] if " " in auth else ""


_BODY_ROUTES = (
    ("POST", re.compile(r"/pulls/\d+/reviews"), "reviews"),
    ("PATCH", re.compile(r"/pulls/\d+"), "pull"),
    ("POST", re.compile(r"/issues/\d+/comments"), "issue_comment"),
    ("PATCH", re.compile(r"/issues/comments/\d+"), "issue_comment"),
    ("POST", re.compile(r"/pulls/\d+/comments/\d+/replies"), "reply"),
    ("POST", re.compile(r"/issues/comments/\d+/reactions"), "reaction"),
    ("POST", re.compile(r"/issues/\d+/labels"), "labels"),
    ("POST", re.compile(r"/check-runs"), "check_run"),
    ("PATCH", re.compile(r"/check-runs/\d+"), "check_run"),
)


def _random_tar(size: int) -> Iterator[bytes]:
    """A tar stream of one file of ``size`` random bytes, made as it is read."""
    info = tarfile.TarInfo("acme-shop-0000000/blob.bin")
    info.size = size
    yield info.tobuf(format=tarfile.GNU_FORMAT)
    left = size
    while left:
        chunk = os.urandom(min(left, 1024 * 1024))
        left -= len(chunk)
        yield chunk
    yield b"\0" * (tarfile.BLOCKSIZE - size % tarfile.BLOCKSIZE) + b"\0" * 1024


def _thread_id(root_comment: int) -> str:
    """A review thread's GraphQL node id, as opaque as GitHub's."""
    return f"PRRT_kwDO{root_comment:08d}"


def _body_kind(method: str, rest: str) -> tuple[str, str] | None:
    """Which body of GitHub's description a request to ``rest`` carries, if any."""
    for route_method, pattern, kind in _BODY_ROUTES:
        if method == route_method and pattern.fullmatch(rest):
            return method, kind
    return None


def _json(status: int, data: Any) -> tuple[int, dict[str, str], bytes]:
    return status, {"content-type": "application/json"}, json.dumps(data).encode()


@contextmanager
def running_fake_github(
    repo: GitRepo, full_name: str, app_id: int, public_key: str
) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(repo=repo, full_name=full_name, app_id=app_id, public_key=public_key)
    with serving_fake(fake) as base:
        fake.base_url = base + ""
        yield fake

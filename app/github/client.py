"""GitHub's REST API through githubkit, as the App and as one of its installations.

githubkit signs the App JWT, exchanges it for installation tokens (cached until shortly
before expiry), honours primary and secondary rate limits and retries server errors.
Every call has a timeout; one client is kept per installation.
"""

from __future__ import annotations

import ssl
from typing import IO, Any
from urllib.parse import quote

import httpx
from githubkit import AppAuthStrategy, GitHub
from githubkit.cache import MemCacheStrategy
from githubkit.exception import GitHubException, GraphQLFailed, RequestFailed
from githubkit.retry import RETRY_SERVER_ERROR, RetryOption, RetryRateLimit
from pydantic import SecretStr

from app.config import Settings
from app.errors import ConfigError
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
from app.forge.protocol import CommentsRefused, ForgeError
from app.github import records
from app.indexing.archive import ArchiveTooLarge
from app.tls import ssl_context

TIMEOUT = httpx.Timeout(30.0, connect=10.0)
CHUNK_BYTES = 64 * 1024
DIFF = {"Accept": "application/vnd.github.diff"}
RAW = {"Accept": "application/vnd.github.raw+json"}
SHA = {"Accept": "application/vnd.github.sha"}


THREADS_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { id isResolved comments(first: 1) { nodes { databaseId } } }
      }
    }
  }
}
"""
RESOLVE_MUTATION = """
mutation($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } }
}
"""


class TarballTooLarge(ArchiveTooLarge):
    """A repository's tarball is over the archive byte cap (an archive limit, as the
    ones met while reading it: not a GitHub failure)."""


class GitHubError(ForgeError):
    """GitHub refused or failed a request."""


_RATE_LIMIT = RetryRateLimit(max_retry=2)
SAFE_METHODS = frozenset({"GET", "HEAD"})


def retry_decision(exc: GitHubException, count: int) -> RetryOption:
    """Wait out primary and secondary rate limits (``retry-after``, ``x-ratelimit-reset``);
    retry 5xx only for reads. A POST that failed with 5xx may still have been applied, so
    the job that made it decides (posting a review reconciles first)."""
    option = _RATE_LIMIT(exc, count)
    if option.do_retry:
        return option
    if isinstance(exc, RequestFailed) and exc.request.method in SAFE_METHODS:
        return RETRY_SERVER_ERROR(exc, count)
    return RetryOption(False)


def call(
    gh: GitHub[Any], method: str, path: str, shown: str | None = None, **kwargs: Any
) -> httpx.Response:
    """One request; failures become ``GitHubError`` naming ``shown`` (default ``path``)."""
    shown = shown or path
    try:
        response = gh.request(method, path, **kwargs)
    except RequestFailed as exc:
        status = exc.response.status_code
        raise GitHubError(f"GitHub {method} {shown} failed with HTTP {status}", status) from None
    except httpx.HTTPError as exc:
        raise GitHubError(f"GitHub {method} {shown} failed: {type(exc).__name__}") from None
    return response.raw_response


class SharedTransport(httpx.HTTPTransport):
    """One transport (TLS context and connection pool) for all of the process's GitHub
    requests. Outside a ``with`` block githubkit makes an httpx client per request and
    closes it after; each would build a TLS context (tens of milliseconds), and closing a shared
    pool would close it under requests of other threads. This transport outlives the
    clients: closing one leaves it open. Connections are not kept alive between requests
    (as before), so no idle socket outlives a request; the pool is thread-safe."""

    def __init__(self, verify: ssl.SSLContext | bool = True) -> None:
        super().__init__(verify=verify, limits=httpx.Limits(max_keepalive_connections=0))

    def close(self) -> None:
        """Left open for the next request; the process's exit closes the sockets."""

    def __exit__(self, *exc: object) -> None:
        """As ``close``: a client leaving its ``with`` block leaves the pool open."""


class GitHubApp:
    """The App's identity; hands out per-installation clients (cached)."""

    def __init__(self, settings: Settings) -> None:
        key = settings.github_private_key()
        if settings.github_app_id is None or key is None:
            raise ConfigError("GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY(_PATH) must be set")
        self._auth = AppAuthStrategy(settings.github_app_id, key.get_secret_value())
        self._base_url = settings.github_api_url + "/"

        # installation tokens (until shortly before expiry) and App JWTs, of this key only
        self._tokens = MemCacheStrategy()
        self._transport = SharedTransport(ssl_context(settings))
        self._clients: dict[int, GitHub[Any]] = {}
        self._app_client: GitHub[Any] | None = None

    def app_call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """A call as the App itself (JWT), such as listing webhook deliveries."""
        if self._app_client is None:
            self._app_client = GitHub(
                self._auth,
                base_url=self._base_url,
                timeout=TIMEOUT,
                http_cache=False,
                auto_retry=retry_decision,
                transport=self._transport,
                cache_strategy=self._tokens,  # this App's JWTs; not a process-wide cache
            )
        return call(self._app_client, method, path, **kwargs)

    def installation_token(self, installation_id: int) -> SecretStr:
        """A fresh installation token, for what githubkit does not do (a git fetch)."""
        data = self.app_call("POST", f"/app/installations/{installation_id}/access_tokens").json()
        return SecretStr(str(data["token"]))

    def installation(self, installation_id: int) -> GitHub[Any]:
        """The client for one installation, made once and reused."""
        if installation_id not in self._clients:
            self._clients[installation_id] = GitHub(
                self._auth.as_installation(installation_id),
                base_url=self._base_url,
                timeout=TIMEOUT,
                http_cache=False,
                auto_retry=retry_decision,
                cache_strategy=self._tokens,
                transport=self._transport,
            )
        return self._clients[installation_id]


class RepoApi:
    """The calls reviewbot makes on one repository."""

    def __init__(self, gh: GitHub[Any], full_name: str) -> None:
        self.gh = gh
        self.owner, self.name = full_name.split("/", 1)
        self.base = f"/repos/{self.owner}/{self.name}"

    def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return call(self.gh, method, self.base + path, shown=path, **kwargs)

    def pull(self, number: int) -> PullRequest:
        return records.pull_request(number, self._call("GET", f"/pulls/{number}").json())

    def default_branch(self) -> str:
        return str(self._call("GET", "").json().get("default_branch") or "main")

    def pull_diff(self, number: int) -> bytes:
        """The PR's diff; rebuilt from the files endpoint when GitHub refuses it (406, too big)."""
        try:
            return self._call("GET", f"/pulls/{number}", headers=DIFF).content
        except GitHubError as exc:
            if exc.status != 406:
                raise
        return records.files_to_diff(self._paginate(f"/pulls/{number}/files"))

    def compare_diff(self, base: str, head: str) -> bytes:
        return self._call("GET", f"/compare/{base}...{head}", headers=DIFF).content

    def compare(self, base: str, head: str) -> Comparison | None:
        """The comparison of two commits; None when GitHub cannot compare them (a commit
        gone after a force push, a diff over its limits)."""
        try:
            return records.comparison(self._call("GET", f"/compare/{base}...{head}").json())
        except GitHubError as exc:
            if exc.status in {404, 406, 422}:
                return None
            raise

    def commit_sha(self, ref: str) -> str:
        """The commit a branch, tag or SHA names now."""
        return self._call("GET", f"/commits/{quote(ref)}", headers=SHA).text.strip()

    def content(self, path: str, ref: str) -> bytes | None:
        try:
            return self._call(
                "GET", f"/contents/{quote(path)}", params={"ref": ref}, headers=RAW
            ).content
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise

    def download_tarball(self, ref: str, into: IO[bytes], max_bytes: int) -> int:
        """Stream the tarball of ``ref`` into ``into``, never more than ``max_bytes``
        (``TarballTooLarge`` past it); returns the bytes written."""
        response = self._call("GET", f"/tarball/{quote(ref)}", stream=True)
        written = 0
        try:
            for chunk in response.iter_bytes(CHUNK_BYTES):
                written += len(chunk)
                if written > max_bytes:
                    raise TarballTooLarge(
                        f"the tarball of {self.owner}/{self.name}@{ref} is larger than"
                        f" {max_bytes} bytes (REVIEWBOT_ARCHIVE_MAX_BYTES); nothing was indexed"
                    )
                into.write(chunk)
        except httpx.HTTPError as exc:
            raise GitHubError(f"GitHub tarball download failed: {type(exc).__name__}") from None
        finally:
            response.close()
        return written

    def create_review(
        self, number: int, commit: str, body: str, comments: list[InlineComment]
    ) -> int:
        posted = [records.inline_comment(c) for c in comments]
        data = {"commit_id": commit, "body": body, "event": "COMMENT", "comments": posted}
        try:
            return int(self._call("POST", f"/pulls/{number}/reviews", json=data).json()["id"])
        except GitHubError as exc:
            if exc.status == 422 and comments:  # a line not in the diff: nothing was posted
                raise CommentsRefused(str(exc), exc.status) from None
            raise

    def start_check(self, number: int, head: str) -> int:
        data = {"name": "reviewbot", "head_sha": head, "status": "in_progress"}
        return int(self._call("POST", "/check-runs", json=data).json()["id"])

    def finish_check(self, check_id: int, conclusion: str, title: str, summary: str) -> None:
        data = {
            "status": "completed",
            "conclusion": conclusion,
            "output": {"title": title, "summary": summary[:60000]},
        }
        self._call("PATCH", f"/check-runs/{check_id}", json=data)

    def reviews(self, number: int) -> list[Review]:
        return [records.review(r) for r in self._paginate(f"/pulls/{number}/reviews")]

    def issue_comments(self, number: int) -> list[Comment]:
        return [records.comment(c) for c in self._paginate(f"/issues/{number}/comments")]

    def comment(self, number: int, body: str) -> int:
        """A comment on the PR's conversation (not on a line)."""
        return int(
            self._call("POST", f"/issues/{number}/comments", json={"body": body}).json()["id"]
        )

    def react(self, number: int, comment_id: int, content: str) -> None:
        self._call("POST", f"/issues/comments/{comment_id}/reactions", json={"content": content})

    def review_comments(self, number: int) -> list[ReviewComment]:
        """The PR's inline comments and replies."""
        return [records.review_comment(c) for c in self._paginate(f"/pulls/{number}/comments")]

    def review_comment(self, number: int, comment_id: int) -> ReviewComment | None:
        try:
            return records.review_comment(self._call("GET", f"/pulls/comments/{comment_id}").json())
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise

    def reply(self, number: int, comment_id: int, body: str) -> int:
        """A reply in the thread of inline comment ``comment_id`` (the replies endpoint)."""
        path = f"/pulls/{number}/comments/{comment_id}/replies"
        return int(self._call("POST", path, json={"body": body}).json()["id"])

    def review_comment_reactions(self, number: int, comment_id: int) -> list[Reaction]:
        path = f"/pulls/comments/{comment_id}/reactions"
        return [records.reaction(r) for r in self._paginate(path)]

    def review_threads(self, number: int) -> list[ReviewThread]:
        """The PR's review threads (GraphQL)."""
        found: list[ReviewThread] = []
        after = None
        for _ in range(30):
            variables = {"owner": self.owner, "name": self.name, "number": number, "after": after}
            data = self._graphql("reviewThreads", THREADS_QUERY, variables)
            threads = data["repository"]["pullRequest"]["reviewThreads"]
            for node in threads["nodes"]:
                first = node["comments"]["nodes"]
                if first:
                    found.append(
                        ReviewThread(
                            str(node["id"]), int(first[0]["databaseId"]), bool(node["isResolved"])
                        )
                    )
            if not threads["pageInfo"]["hasNextPage"]:
                break
            after = threads["pageInfo"]["endCursor"]
        return found

    def resolve_thread(self, number: int, node_id: str) -> None:
        """Mark a review thread resolved (GraphQL ``resolveReviewThread``)."""
        self._graphql("resolveReviewThread", RESOLVE_MUTATION, {"threadId": node_id})

    def _graphql(self, what: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        try:
            return dict(self.gh.graphql.request(query, variables))
        except RequestFailed as exc:
            status = exc.response.status_code
            raise GitHubError(f"GitHub GraphQL {what} failed with HTTP {status}", status) from None
        except GraphQLFailed:  # an answer, with errors: asking again will not help
            raise GitHubError(f"GitHub GraphQL {what} answered with errors", 400) from None
        except (GitHubException, httpx.HTTPError) as exc:
            raise GitHubError(f"GitHub GraphQL {what} failed: {type(exc).__name__}") from None

    def update_description(self, number: int, body: str) -> None:
        """Replace the PR's description (``PATCH /pulls/{n}``)."""
        self._call("PATCH", f"/pulls/{number}", json={"body": body})

    def labels(self) -> list[str]:
        """The names of the repository's labels."""
        return [str(label["name"]) for label in self._paginate("/labels")]

    def add_labels(self, number: int, names: list[str]) -> None:
        """Add existing labels to the PR (GitHub makes unknown ones; never call it so)."""
        self._call("POST", f"/issues/{number}/labels", json={"labels": names})

    def permission(self, user: str) -> str:
        data = self._call("GET", f"/collaborators/{user}/permission").json()
        return str(data.get("permission") or "none")

    def _paginate(self, path: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for page in range(1, 31):  # GitHub lists at most 3,000 files per PR
            batch = self._call("GET", path, params={"per_page": 100, "page": page}).json()
            items.extend(batch)
            if len(batch) < 100:
                break
        return items

"""Webhook intake rules: signature checks and which jobs each event asks for. Pure.

The router is a table: ``@on("pull_request", {"opened", ...})`` marks a function that
turns an event's payload into the jobs to enqueue. Events nobody handles give no jobs
and are still acknowledged with 2xx, as GitHub expects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from githubkit import webhooks

from app.errors import ReviewbotError

#: GitHub caps webhook payloads at 25 MB.
MAX_WEBHOOK_BYTES = 25 * 1024 * 1024
COMMANDS = {"/review": "review", "/reindex": "reindex"}


class WebhookRejected(ReviewbotError):
    """The webhook request was refused."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def check_signature(secret: str, body: bytes, header: str | None) -> None:
    """Constant-time check of ``X-Hub-Signature-256`` over the raw body; raises 401."""
    if not header or not header.startswith("sha256="):
        raise WebhookRejected(401, "missing or malformed X-Hub-Signature-256")
    if not webhooks.verify(secret, body, header):
        raise WebhookRejected(401, "signature does not match the payload")


@dataclass(frozen=True)
class Job:
    """A job to enqueue: the task, its arguments, and its coalescing and serial locks."""

    task: str
    args: dict[str, Any]
    queueing_lock: str | None = None
    lock: str | None = None


@dataclass(frozen=True)
class EventContext:
    event: str
    action: str | None
    payload: dict[str, Any]
    review_drafts: bool = False

    @property
    def installation_id(self) -> int | None:
        installation = self.payload.get("installation") or {}
        value = installation.get("id")
        return int(value) if isinstance(value, int) else None

    @property
    def repo(self) -> str | None:
        repository = self.payload.get("repository") or {}
        name = repository.get("full_name")
        return name if isinstance(name, str) else None


Handler = Callable[[EventContext], list[Job]]


@dataclass
class Router:
    handlers: dict[tuple[str, str | None], list[Handler]] = field(default_factory=dict)

    def on(self, event: str, actions: Iterable[str] | None = None) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            for action in actions if actions is not None else [None]:
                self.handlers.setdefault((event, action), []).append(handler)
            return handler

        return register

    def jobs_for(self, context: EventContext) -> list[Job]:
        handlers = list(self.handlers.get((context.event, None), []))
        if context.action is not None:
            handlers += self.handlers.get((context.event, context.action), [])
        return [job for handler in handlers for job in handler(context)]


router = Router()


def review_job(repo: str, installation_id: int, pr_number: int, full: bool = False) -> Job:
    # One queued review per PR: a burst of pushes coalesces into one job, which reviews
    # the newest head when it runs. Reviews of one PR never run side by side.
    key = f"review:{repo}#{pr_number}"
    return Job(
        "review_pull_request",
        {"repo": repo, "installation_id": installation_id, "pr_number": pr_number, "full": full},
        queueing_lock=key,
        lock=key,
    )


def index_job(repo: str, installation_id: int, full: bool) -> Job:
    key = f"index:{repo}"
    return Job(
        "index_repository",
        {"repo": repo, "installation_id": installation_id, "full": full},
        queueing_lock=key if not full else f"{key}:full",
        lock=key,
    )


def purge_job(repo: str) -> Job:
    return Job("purge_repository", {"repo": repo}, lock=f"index:{repo}")


@router.on("pull_request", {"opened", "reopened", "ready_for_review", "synchronize"})
def on_pull_request(ctx: EventContext) -> list[Job]:
    pr = ctx.payload.get("pull_request") or {}
    if ctx.repo is None or ctx.installation_id is None or not isinstance(pr.get("number"), int):
        return []
    if pr.get("draft") and not ctx.review_drafts:
        return []
    if pr.get("state") == "closed":
        return []
    return [review_job(ctx.repo, ctx.installation_id, pr["number"])]


@router.on("push")
def on_push(ctx: EventContext) -> list[Job]:
    default = (ctx.payload.get("repository") or {}).get("default_branch")
    if ctx.repo is None or ctx.installation_id is None or not default:
        return []
    if ctx.payload.get("ref") != f"refs/heads/{default}" or ctx.payload.get("deleted"):
        return []
    return [index_job(ctx.repo, ctx.installation_id, full=False)]


def _repo_names(items: object) -> list[str]:
    if not isinstance(items, list):
        return []
    return [
        r["full_name"] for r in items if isinstance(r, dict) and isinstance(r.get("full_name"), str)
    ]


@router.on("installation", {"created"})
def on_installation_created(ctx: EventContext) -> list[Job]:
    if ctx.installation_id is None:
        return []
    return [
        index_job(name, ctx.installation_id, full=True)
        for name in _repo_names(ctx.payload.get("repositories"))
    ]


@router.on("installation_repositories", {"added"})
def on_repositories_added(ctx: EventContext) -> list[Job]:
    if ctx.installation_id is None:
        return []
    return [
        index_job(name, ctx.installation_id, full=True)
        for name in _repo_names(ctx.payload.get("repositories_added"))
    ]


@router.on("installation", {"deleted"})
def on_installation_deleted(ctx: EventContext) -> list[Job]:
    return [purge_job(name) for name in _repo_names(ctx.payload.get("repositories"))]


@router.on("installation_repositories", {"removed"})
def on_repositories_removed(ctx: EventContext) -> list[Job]:
    return [purge_job(name) for name in _repo_names(ctx.payload.get("repositories_removed"))]


@router.on("issue_comment", {"created"})
def on_comment(ctx: EventContext) -> list[Job]:
    issue = ctx.payload.get("issue") or {}
    comment = ctx.payload.get("comment") or {}
    command = COMMANDS.get(str(comment.get("body", "")).strip())
    if (
        command is None
        or not issue.get("pull_request")
        or ctx.repo is None
        or ctx.installation_id is None
    ):
        return []
    user = (comment.get("user") or {}).get("login")
    return [
        Job(
            "pr_command",
            {
                "repo": ctx.repo,
                "installation_id": ctx.installation_id,
                "pr_number": issue.get("number"),
                "command": command,
                "user": user,
                "comment_id": comment.get("id"),
            },
        )
    ]

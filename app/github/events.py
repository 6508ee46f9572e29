"""Webhook intake rules: signature checks and which jobs each event asks for. Pure.

The router is a table: ``@on("pull_request", {"opened", ...})`` marks a function that
turns an event's payload into the jobs to enqueue. Events nobody handles give no jobs
and are still acknowledged with 2xx, as GitHub expects.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from githubkit import webhooks

from app.errors import ReviewbotError
from app.review.conversation import MAX_QUESTION_CHARS, parse_ask
from app.task_specs import (
    CommandArgs,
    DescribeArgs,
    FeedbackArgs,
    IndexArgs,
    Job,
    QuestionArgs,
    ReplyArgs,
    RepositoryArgs,
    ReviewArgs,
    TaskName,
    conversation_lock,
    describe_lock,
    feedback_lock,
    index_lock,
    review_lock,
)

#: GitHub caps webhook payloads at 25 MB.
MAX_WEBHOOK_BYTES = 25 * 1024 * 1024
#: Delivery ids are UUIDs; event and action names are short snake_case words.
DELIVERY_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
EVENT_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
MAX_ID = 2**63 - 1  # ids are stored as bigint
MAX_NAME = 255  # owner/name, branch names
COMMANDS = {"/review": "review", "/reindex": "reindex", "/describe": "describe", "/help": "help"}
#: A reply in the bot's thread that only lets it resolve the thread: not a question.
RESOLVE = "/resolve"


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


def check_headers(event: str, delivery: str) -> None:
    """``X-GitHub-Event`` and ``X-GitHub-Delivery`` are present and well-formed; 400 if not."""
    if not delivery or not event:
        raise WebhookRejected(400, "missing X-GitHub-Delivery or X-GitHub-Event")
    if not DELIVERY_ID.fullmatch(delivery):
        raise WebhookRejected(400, "X-GitHub-Delivery is not a delivery id")
    if not EVENT_NAME.fullmatch(event):
        raise WebhookRejected(400, "X-GitHub-Event is not an event name")


def _bad(field_name: str, expected: str) -> WebhookRejected:
    return WebhookRejected(400, f"payload field {field_name} must be {expected}")


def _object(payload: dict[str, Any], key: str, where: str = "") -> dict[str, Any]:
    value = payload.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _bad(where + key, "an object")
    return value


def _id(value: object, field_name: str) -> None:
    if value is not None and not (
        isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_ID
    ):
        raise _bad(field_name, "a positive integer below 2^63")


def _text(value: object, field_name: str, limit: int = MAX_NAME) -> None:
    if value is not None and not (isinstance(value, str) and len(value) <= limit):
        raise _bad(field_name, f"a string of at most {limit} characters")


#: GitHub's rules for owner/name: an owner of letters, digits, hyphens (and underscores,
#: on Enterprise Server); a name of letters, digits, ``.``, ``-`` and ``_``, not ``.`` or ``..``
FULL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,38}/(?!\.\.?$)[A-Za-z0-9_.-]{1,100}")


def _full_name(value: object, field_name: str) -> None:
    _text(value, field_name)
    if value is not None and not FULL_NAME.fullmatch(str(value)):
        raise _bad(field_name, "owner/name as GitHub allows them")


def _repositories(value: object, field_name: str) -> None:
    if value is None:
        return
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        raise _bad(field_name, "a list of objects")
    for repo in value:
        _full_name(repo.get("full_name"), f"{field_name}[].full_name")


def check_payload(payload: dict[str, Any]) -> None:
    """The fields the router and the delivery record read have the types, ranges and
    lengths GitHub sends; anything else is refused with 400 before it is recorded."""
    _text(payload.get("action"), "action", 64)
    _text(payload.get("ref"), "ref", 1024)
    installation = _object(payload, "installation")
    _id(installation.get("id"), "installation.id")
    repository = _object(payload, "repository")
    _full_name(repository.get("full_name"), "repository.full_name")
    _text(repository.get("default_branch"), "repository.default_branch")
    for key in ("pull_request", "issue"):
        item = _object(payload, key)
        _id(item.get("number"), f"{key}.number")
        _text(item.get("state"), f"{key}.state", 32)
    comment = _object(payload, "comment")
    _id(comment.get("id"), "comment.id")
    _text(comment.get("body"), "comment.body", 65536)
    _text(_object(comment, "user", "comment.").get("login"), "comment.user.login")
    _id(comment.get("in_reply_to_id"), "comment.in_reply_to_id")
    for key in ("repositories", "repositories_added", "repositories_removed"):
        _repositories(payload.get(key), key)


@dataclass(frozen=True)
class EventContext:
    event: str
    action: str | None
    payload: dict[str, Any]

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
    key = review_lock(repo, pr_number)
    args = ReviewArgs(repo, installation_id, pr_number, full)
    return Job(TaskName.REVIEW, args, queueing_lock=key, lock=key)


def index_job(repo: str, installation_id: int, full: bool) -> Job:
    key = index_lock(repo)
    queueing = key if not full else f"{key}:full"
    return Job(TaskName.INDEX, IndexArgs(repo, installation_id, full), queueing, lock=key)


def purge_job(repo: str) -> Job:
    return Job(TaskName.PURGE, RepositoryArgs(repo), lock=index_lock(repo))


def describe_job(repo: str, installation_id: int, pr_number: int) -> Job:
    # the description follows the newest head, like the review; the job reads whether
    # the repository wants one (``describe`` in .reviewbot.toml)
    key = describe_lock(repo, pr_number)
    args = DescribeArgs(repo, installation_id, pr_number)
    return Job(TaskName.DESCRIBE, args, queueing_lock=key, lock=key)


@router.on("pull_request", {"opened", "reopened", "ready_for_review", "synchronize"})
def on_pull_request(ctx: EventContext) -> list[Job]:
    pr = ctx.payload.get("pull_request") or {}
    if ctx.repo is None or ctx.installation_id is None or not isinstance(pr.get("number"), int):
        return []
    if pr.get("state") == "closed":
        return []
    return [
        review_job(ctx.repo, ctx.installation_id, pr["number"]),
        describe_job(ctx.repo, ctx.installation_id, pr["number"]),
    ]


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


def _from_a_bot(comment: dict[str, Any]) -> bool:
    """Bots (this one included) are never answered: two bots must not talk forever."""
    user = comment.get("user") or {}
    return user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]")


def conversation_job(task: TaskName, args: QuestionArgs | ReplyArgs) -> Job:
    return Job(task, args, lock=conversation_lock(args.repo, args.pr_number))


@router.on("issue_comment", {"created"})
def on_comment(ctx: EventContext) -> list[Job]:
    issue = ctx.payload.get("issue") or {}
    comment = ctx.payload.get("comment") or {}
    body = str(comment.get("body", ""))
    command = COMMANDS.get(body.strip())
    question = parse_ask(body)
    if question is not None and _from_a_bot(comment):
        question = None
    if (
        (command is None and not question)
        or not issue.get("pull_request")
        or not isinstance(issue.get("number"), int)
        or ctx.repo is None
        or ctx.installation_id is None
    ):
        return []
    user = (comment.get("user") or {}).get("login")
    if question:
        if not isinstance(comment.get("id"), int):
            return []  # an answer replies to the comment
        args = QuestionArgs(
            ctx.repo, ctx.installation_id, issue["number"], question, user, comment["id"]
        )
        return [conversation_job(TaskName.ANSWER_QUESTION, args)]
    assert command is not None  # no question: a command
    spec = CommandArgs(
        ctx.repo, ctx.installation_id, issue["number"], command, user, comment.get("id")
    )
    return [Job(TaskName.COMMAND, spec)]


@router.on("pull_request_review_comment", {"created"})
def on_review_comment(ctx: EventContext) -> list[Job]:
    """A reply in a review thread; the job answers only in threads the bot started."""
    comment = ctx.payload.get("comment") or {}
    pr = ctx.payload.get("pull_request") or {}
    parent = comment.get("in_reply_to_id")
    if (
        not isinstance(parent, int)
        or not isinstance(comment.get("id"), int)
        or _from_a_bot(comment)
        or str(comment.get("body", "")).strip() == RESOLVE
        or not isinstance(pr.get("number"), int)
        or ctx.repo is None
        or ctx.installation_id is None
    ):
        return []
    args = ReplyArgs(
        repo=ctx.repo,
        installation_id=ctx.installation_id,
        pr_number=pr["number"],
        comment_id=comment["id"],
        parent_id=parent,
        said=str(comment.get("body", ""))[:MAX_QUESTION_CHARS],
        user=(comment.get("user") or {}).get("login"),
    )
    return [conversation_job(TaskName.ANSWER_REPLY, args)]


@router.on("pull_request", {"closed"})
def on_pull_request_closed(ctx: EventContext) -> list[Job]:
    """What people made of the bot's comments is read once the PR is done."""
    pr = ctx.payload.get("pull_request") or {}
    if ctx.repo is None or ctx.installation_id is None or not isinstance(pr.get("number"), int):
        return []
    key = feedback_lock(ctx.repo, pr["number"])
    args = FeedbackArgs(ctx.repo, ctx.installation_id, pr["number"])
    return [Job(TaskName.COLLECT_FEEDBACK, args, queueing_lock=key, lock=key)]

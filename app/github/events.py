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

from app.forge.intake import (
    DELIVERY_ID,
    WebhookRejected,
    bad,
    id_field,
    object_field,
    text_field,
)
from app.review.conversation import COMMANDS, MAX_QUESTION_CHARS, RESOLVE, parse_ask
from app.task_specs import (
    CommandArgs,
    Job,
    QuestionArgs,
    ReplyArgs,
    TaskName,
    command_job,
    conversation_job,
    describe_job,
    feedback_job,
    index_job,
    purge_job,
    review_job,
)

#: Event and action names are short snake_case words.
EVENT_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


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


#: GitHub's rules for owner/name: an owner of letters, digits, hyphens (and underscores,
#: on Enterprise Server); a name of letters, digits, ``.``, ``-`` and ``_``, not ``.`` or ``..``
FULL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,38}/(?!\.\.?$)[A-Za-z0-9_.-]{1,100}")


def _full_name(value: object, field_name: str) -> None:
    text_field(value, field_name)
    if value is not None and not FULL_NAME.fullmatch(str(value)):
        raise bad(field_name, "owner/name as GitHub allows them")


def _repositories(value: object, field_name: str) -> None:
    if value is None:
        return
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        raise bad(field_name, "a list of objects")
    for repo in value:
        _full_name(repo.get("full_name"), f"{field_name}[].full_name")


def check_payload(payload: dict[str, Any]) -> None:
    """The fields the router and the delivery record read have the types, ranges and
    lengths GitHub sends; anything else is refused with 400 before it is recorded."""
    text_field(payload.get("action"), "action", 64)
    text_field(payload.get("ref"), "ref", 1024)
    installation = object_field(payload, "installation")
    id_field(installation.get("id"), "installation.id")
    repository = object_field(payload, "repository")
    _full_name(repository.get("full_name"), "repository.full_name")
    text_field(repository.get("default_branch"), "repository.default_branch")
    for key in ("pull_request", "issue"):
        item = object_field(payload, key)
        id_field(item.get("number"), f"{key}.number")
        text_field(item.get("state"), f"{key}.state", 32)
    comment = object_field(payload, "comment")
    id_field(comment.get("id"), "comment.id")
    text_field(comment.get("body"), "comment.body", 65536)
    text_field(object_field(comment, "user", "comment.").get("login"), "comment.user.login")
    id_field(comment.get("in_reply_to_id"), "comment.in_reply_to_id")
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
    return [command_job(spec)]


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
    return [feedback_job(ctx.repo, ctx.installation_id, pr["number"])]

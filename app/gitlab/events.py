"""GitLab webhook intake rules: the secret token, the payload's fields, and which jobs
each event asks for. Pure.

GitLab sends ``X-Gitlab-Event`` (``Merge Request Hook``, ``Note Hook``, ``Push Hook``),
``X-Gitlab-Token`` (the webhook's secret token, compared in constant time) and
``X-Gitlab-Event-UUID``; from GitLab 17.4 also ``Idempotency-Key``, the same on every
retry of one delivery, which is then the delivery's key.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.forge.intake import (
    DELIVERY_ID,
    MAX_NAME,
    WebhookRejected,
    bad,
    id_field,
    object_field,
    text_field,
)
from app.gitlab.records import BOT_USER, repo_key
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
    review_job,
)

#: ``X-Gitlab-Event`` values: words and spaces (``Merge Request Hook``).
EVENT_HEADER = re.compile(r"[A-Za-z][A-Za-z ]{0,63}")
#: GitLab's project paths: namespaces and a project name of letters, digits, ``_``,
#: ``-`` and ``.`` (not first), up to 20 levels of subgroups.
PROJECT_PATH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*){1,20}")
NO_COMMIT = "0" * 40


def delivery_key(headers: dict[str, str]) -> str:
    """The delivery's key: GitLab's idempotency key (the same on retries), else the event's
    UUID; 400 when neither is there or well-formed."""
    key = headers.get("idempotency-key") or headers.get("x-gitlab-event-uuid") or ""
    if not key:
        raise WebhookRejected(400, "missing X-Gitlab-Event-UUID")
    if not DELIVERY_ID.fullmatch(key):
        raise WebhookRejected(400, "X-Gitlab-Event-UUID is not a delivery id")
    return key


def check_event(event: str) -> None:
    if not event:
        raise WebhookRejected(400, "missing X-Gitlab-Event")
    if not EVENT_HEADER.fullmatch(event):
        raise WebhookRejected(400, "X-Gitlab-Event is not an event name")


#: The ``X-Gitlab-Event`` header each handled ``object_kind`` comes with, from a project or
#: group webhook. A body of one kind under another header (a system hook's, or a forged
#: one) is refused: routing reads ``object_kind``, so the two must agree.
EVENT_HEADERS = {
    "merge_request": ("Merge Request Hook",),
    "note": ("Note Hook", "Confidential Note Hook"),
    "push": ("Push Hook",),
}


def check_kind(event_header: str, payload: dict[str, Any]) -> None:
    """400 when the header and the body's ``object_kind`` disagree for a kind reviewbot
    acts on (other kinds are acknowledged and ignored)."""
    kind = payload.get("object_kind")
    expected = EVENT_HEADERS.get(kind) if isinstance(kind, str) else None
    if expected is None or event_header in expected:
        return
    if event_header == "System Hook":
        raise WebhookRejected(
            400, "system hooks are not supported: add a project or group webhook instead"
        )
    raise WebhookRejected(
        400, f"X-Gitlab-Event {event_header!r} does not match object_kind {kind!r}"
    )


def check_key(event: GitLabEvent) -> None:
    """400 when the instance's name and the project's path make a repository key longer
    than reviewbot stores (``MAX_NAME``)."""
    if event.repo is not None and len(event.repo) > MAX_NAME:
        raise WebhookRejected(
            400,
            f"project path too long: {event.url} and project.path_with_namespace make a"
            f" key of {len(event.repo)} characters, over the {MAX_NAME} reviewbot stores",
        )


def _path(value: object, field_name: str) -> None:
    text_field(value, field_name)
    if value is not None and not PROJECT_PATH.fullmatch(str(value)):
        raise bad(field_name, "a project path as GitLab allows them")


def check_payload(payload: dict[str, Any]) -> None:
    """The fields the router and the delivery record read have the types, ranges and
    lengths GitLab sends; anything else is refused with 400 before it is recorded."""
    text_field(payload.get("object_kind"), "object_kind", 64)
    text_field(payload.get("ref"), "ref", 1024)
    text_field(payload.get("after"), "after", 64)
    project = object_field(payload, "project")
    id_field(project.get("id"), "project.id")
    _path(project.get("path_with_namespace"), "project.path_with_namespace")
    text_field(project.get("default_branch"), "project.default_branch")
    attributes = object_field(payload, "object_attributes")
    id_field(attributes.get("id"), "object_attributes.id")
    id_field(attributes.get("iid"), "object_attributes.iid")
    for key, limit in (("action", 32), ("state", 32), ("noteable_type", 64), ("type", 64)):
        text_field(attributes.get(key), f"object_attributes.{key}", limit)
    text_field(attributes.get("note"), "object_attributes.note", 1_000_000)
    text_field(attributes.get("discussion_id"), "object_attributes.discussion_id", 64)
    text_field(attributes.get("oldrev"), "object_attributes.oldrev", 64)
    id_field(object_field(payload, "merge_request").get("iid"), "merge_request.iid")
    text_field(object_field(payload, "user").get("username"), "user.username")
    object_field(payload, "changes")


@dataclass(frozen=True)
class GitLabEvent:
    """One delivery: its ``object_kind``, action and payload, on the instance ``url``."""

    event: str
    action: str | None
    payload: dict[str, Any]
    url: str

    @property
    def installation_id(self) -> int | None:
        """The project's id: what a job reaches the project by."""
        value = (self.payload.get("project") or {}).get("id")
        return value if isinstance(value, int) else None

    @property
    def repo(self) -> str | None:
        path = (self.payload.get("project") or {}).get("path_with_namespace")
        return repo_key(self.url, path) if isinstance(path, str) else None

    @property
    def attributes(self) -> dict[str, Any]:
        return self.payload.get("object_attributes") or {}


def event_of(payload: dict[str, Any], url: str) -> GitLabEvent:
    attributes = payload.get("object_attributes") or {}
    kind = str(payload.get("object_kind") or "")
    action = attributes.get("action") if isinstance(attributes.get("action"), str) else None
    return GitLabEvent(kind, action, payload, url)


def jobs_for(event: GitLabEvent) -> list[Job]:
    """The jobs an event asks for; none for events nobody handles (still acknowledged)."""
    if event.repo is None or event.installation_id is None:
        return []
    handler = HANDLERS.get(event.event)
    return handler(event, event.repo, event.installation_id) if handler else []


def _changed(event: GitLabEvent, field_name: str) -> tuple[Any, Any] | None:
    change = (event.payload.get("changes") or {}).get(field_name)
    if not isinstance(change, dict):
        return None
    return change.get("previous"), change.get("current")


def on_merge_request(event: GitLabEvent, repo: str, project: int) -> list[Job]:
    """Opened, reopened, new commits (``oldrev``) or marked ready: review and describe.
    Closed or merged: read the feedback. Other updates (title, labels): nothing."""
    mr = event.attributes
    iid = mr.get("iid")
    if not isinstance(iid, int):
        return []
    if event.action in {"close", "merge"}:
        return [feedback_job(repo, project, iid)]
    if mr.get("state") not in {None, "opened"}:
        return []
    pushed = event.action == "update" and bool(mr.get("oldrev"))
    ready = _changed(event, "draft") == (True, False)
    if event.action in {"open", "reopen"} or pushed or ready:
        return [review_job(repo, project, iid), describe_job(repo, project, iid)]
    return []


def _from_a_bot(user: dict[str, Any]) -> bool:
    """GitLab's bot users (project and group access tokens). The bot's own notes, made
    with a personal token, are told apart by the job, which knows who it is."""
    login = str(user.get("username") or "")
    return bool(user.get("bot")) or BOT_USER.fullmatch(login) is not None


def on_note(event: GitLabEvent, repo: str, project: int) -> list[Job]:
    """A comment on a merge request: a command, ``/ask``, or a reply in a diff thread."""
    note = event.attributes
    mr = event.payload.get("merge_request") or {}
    if note.get("noteable_type") != "MergeRequest" or note.get("action") not in {None, "create"}:
        return []
    iid, note_id = mr.get("iid"), note.get("id")
    user = event.payload.get("user") or {}
    if not isinstance(iid, int) or not isinstance(note_id, int) or note.get("system"):
        return []
    body = str(note.get("note") or "")
    login = user.get("username") if isinstance(user.get("username"), str) else None
    if note.get("type") == "DiffNote":  # in a diff thread: a reply, if the bot began it
        if _from_a_bot(user) or body.strip() == RESOLVE:
            return []
        said = body[:MAX_QUESTION_CHARS]
        reply = ReplyArgs(repo, project, iid, note_id, None, said, login)
        return [conversation_job(TaskName.ANSWER_REPLY, reply)]
    question = parse_ask(body)
    if question and not _from_a_bot(user):
        args = QuestionArgs(repo, project, iid, question, login, note_id)
        return [conversation_job(TaskName.ANSWER_QUESTION, args)]
    command = COMMANDS.get(body.strip())
    if command is None:
        return []
    return [command_job(CommandArgs(repo, project, iid, command, login, note_id))]


def on_push(event: GitLabEvent, repo: str, project: int) -> list[Job]:
    """A push to the default branch re-indexes what it changed."""
    default = (event.payload.get("project") or {}).get("default_branch")
    after = event.payload.get("after")
    if not default or event.payload.get("ref") != f"refs/heads/{default}" or after == NO_COMMIT:
        return []
    return [index_job(repo, project, full=False)]


HANDLERS: dict[str, Callable[[GitLabEvent, str, int], list[Job]]] = {
    "merge_request": on_merge_request,
    "note": on_note,
    "push": on_push,
}

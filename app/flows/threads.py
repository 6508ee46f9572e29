"""On a push, resolve the bot's threads whose findings the push fixed
(``app/review/resolve.py`` says when). Runs after the review is posted; a thread that
cannot be resolved now (GitHub or the model failing) is left open and logged, and the
review stands."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import openai

from app.config import Settings
from app.flows.findings import PostedFinding, posted_findings
from app.forge.protocol import ForgeError, RepoHost
from app.llm.pacing import Deadline
from app.logs import kv
from app.review.model import ReviewModelError, ask_text_model
from app.review.resolve import (
    NOT_RESOLVED,
    already_answered,
    commented_lines,
    excerpt,
    not_resolved_reply,
    parse_verdict,
    people_allow,
    resolve_prompt,
    resolved_reply,
    said_before,
    still_there,
)

log = logging.getLogger(__name__)


@dataclass
class Resolution:
    resolved: list[int] = field(default_factory=list)  # the threads' first comments
    prompt_tokens: int = 0
    completion_tokens: int = 0


def resolve_fixed_threads(
    api: RepoHost,
    pr_number: int,
    head: str,
    llm: openai.OpenAI | None,
    settings: Settings,
) -> Resolution:
    """Resolve the open threads the push to ``head`` fixed."""
    done = Resolution()
    deadline = Deadline(settings.llm_job_budget_seconds)
    for found in posted_findings(api, pr_number):
        if found.thread is None or found.thread.resolved or not people_allow(found.replies):
            continue
        try:
            fixed, why = _fixed(api, found, head, llm, settings, deadline, done)
            if not fixed:
                continue
            _resolve_then_say(api, pr_number, found, head, why)
        except (ForgeError, ReviewModelError) as exc:
            log.warning(
                kv("thread.not_resolved", pr=pr_number, comment=found.comment.id, error=exc)
            )
            continue
        done.resolved.append(found.comment.id)
        log.info(kv("thread.resolved", pr=pr_number, comment=found.comment.id, head=head))
    return done


def _resolve_then_say(
    api: RepoHost, pr_number: int, found: PostedFinding, head: str, why: str
) -> None:
    """Resolve the thread, then say so; when the host refuses, say that instead (once)
    and raise, so the next push tries again. A reply never claims what did not happen."""
    assert found.thread is not None
    try:
        api.resolve_thread(pr_number, found.thread.node_id)
    except ForgeError:
        if not said_before(found.replies, NOT_RESOLVED):
            api.reply(pr_number, found.comment.id, not_resolved_reply(head, why))
        raise
    if not already_answered(found.replies):
        api.reply(pr_number, found.comment.id, resolved_reply(head, why))


def _fixed(
    api: RepoHost,
    found: PostedFinding,
    head: str,
    llm: openai.OpenAI | None,
    settings: Settings,
    deadline: Deadline,
    spent: Resolution,
) -> tuple[bool, str]:
    """(fixed, why): the lines commented on are gone, and the model (if any) agrees."""
    comment = found.comment
    path, line, posted_at = comment.path, comment.posted_line, comment.posted_commit
    if not path or line is None or not posted_at:
        return False, ""
    start = comment.posted_start_line or line
    before = api.content(path, posted_at)
    if before is None:
        return False, ""
    old = commented_lines(before.decode("utf-8", "replace"), int(start), line)
    now = api.content(path, head)
    new_text = now.decode("utf-8", "replace") if now is not None else ""
    if still_there(old, new_text):
        return False, ""
    if llm is None:
        return True, "The code this comment was about is gone."
    answer = ask_text_model(
        llm,
        settings.review_model,
        resolve_prompt(comment.body, "\n".join(old), excerpt(new_text, line)),
        400,
        deadline,
    )
    spent.prompt_tokens += answer.prompt_tokens
    spent.completion_tokens += answer.completion_tokens
    verdict = parse_verdict(answer.text)
    if verdict is None:
        return False, ""
    applies, why = verdict
    return not applies, why

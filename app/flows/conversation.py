"""Answer questions in a pull request: ``/ask <question>`` comments, and replies to the
bot's own inline comments (answered in the same thread).

Anyone with read access may ask. Each question is answered once: a ``conversations``
row is claimed before the model is asked, and the answer carries a marker that a retry
looks for before posting again. A PR gets at most ``REVIEWBOT_ASK_LIMIT_PER_HOUR``
answers an hour; the first question over the limit gets a polite note, later ones none.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from app.db.queries.conversations import (
    conversation_status,
    finish_conversation,
    questions_last_hour,
    start_conversation,
)
from app.db.queries.repositories import locked_repository
from app.diff.parse import parse_diff
from app.flows.budget import over_budget, spend
from app.flows.index import ensure_indexed
from app.flows.review_config import repository_review_config
from app.forge.models import Comment, PullRequest, ReviewComment
from app.forge.protocol import RepoHost
from app.indexing.embedder import select_embedder
from app.llm.client import make_openai_client
from app.llm.pacing import Deadline
from app.llm.prices import model_prices
from app.llm.tokens import token_counter
from app.logs import kv
from app.retrieval.retrieve import retrieve_for_question
from app.review.budget import cost_line
from app.review.config import ReviewConfig
from app.review.context_blocks import render_context_block
from app.review.conversation import (
    Question,
    answer_markdown,
    answer_marker,
    answer_prompt,
    limited_message,
)
from app.review.diff_text import fit_diff, render_diff
from app.review.feedback import finding_of, title_of
from app.review.model import ask_text_model
from app.runtime import Runtime
from app.task_specs import conversation_lock

log = logging.getLogger(__name__)
READ_PERMISSIONS = {"admin", "maintain", "write", "triage", "read"}
_HIDDEN = re.compile(r"<!--.*?-->", re.S)


def answer_question(
    run: Runtime,
    repo: str,
    installation_id: int,
    pr_number: int,
    question: str,
    user: str | None,
    comment_id: int,
) -> str:
    """Answer ``/ask <question>`` as a PR comment; returns what happened."""
    if run.settings.ask_limit_per_hour == 0:
        return "off"
    api = run.host.repository(installation_id, repo)
    config = repository_review_config(api, pr_number)
    if over_budget(run, api, repo, installation_id, pr_number, config):
        return "over budget"
    asked = _Asked(run, repo, installation_id, pr_number, "ask", comment_id)
    state = asked.admit(api, user, lambda body: api.comment(pr_number, body))
    if state != "go":
        return state
    if asked.reconciled(api.issue_comments(pr_number)):
        return "reconciled"
    api.react(pr_number, comment_id, "eyes")
    pr = api.pull(pr_number)
    question_ = Question(question, str(user))
    body = _answer(run, api, repo, pr, config, question_, question, comment_id)
    return asked.deliver(body, lambda body: api.comment(pr_number, body))


def answer_reply(
    run: Runtime,
    repo: str,
    installation_id: int,
    pr_number: int,
    comment_id: int,
    parent_id: int | None,
    said: str,
    user: str | None,
) -> str:
    """Answer a reply to one of the bot's inline comments, in that thread. A host whose
    event does not name the thread's first comment (``parent_id`` None) has it looked up."""
    if run.settings.ask_limit_per_hour == 0:
        return "off"
    api = run.host.repository(installation_id, repo)
    if parent_id is None:
        said_here = api.review_comment(pr_number, comment_id)
        if said_here is None or said_here.author.bot:
            return "not ours"  # gone, or the bot's own reply: never answered
        parent_id = said_here.in_reply_to
    parent = api.review_comment(pr_number, parent_id) if parent_id is not None else None
    if parent is None or parent_id is None or finding_of(parent.body) is None:
        return "not ours"
    root = parent_id
    config = repository_review_config(api, pr_number)
    if over_budget(run, api, repo, installation_id, pr_number, config):
        return "over budget"

    def post(body: str) -> int:
        return api.reply(pr_number, root, body)

    asked = _Asked(run, repo, installation_id, pr_number, "reply", comment_id)
    state = asked.admit(api, user, post)
    if state != "go":
        return state
    thread = [c for c in api.review_comments(pr_number) if root in (c.id, c.in_reply_to)]
    if asked.reconciled(thread):
        return "reconciled"
    question = Question(
        said,
        str(user),
        code=parent.diff_hunk,
        thread=tuple(_said(c) for c in sorted(thread, key=lambda c: c.id) if c.id != comment_id),
    )
    pr = api.pull(pr_number)
    query = f"{title_of(parent.body)} {said}"
    return asked.deliver(_answer(run, api, repo, pr, config, question, query, comment_id), post)


@dataclass
class _Asked:
    """One question's way through: who may ask, once, within the hourly limit."""

    run: Runtime
    repo: str
    installation_id: int
    pr_number: int
    kind: str  # ask | reply
    question_id: int
    repo_id: int = 0

    def admit(self, api: RepoHost, user: str | None, post: Callable[[str], int]) -> str:
        """``go``, or why not: ``refused`` (no read access), ``done`` (answered before),
        ``limited`` (over the hourly limit; said so with ``post``) or ``quiet``."""
        if not user or api.permission(user) not in READ_PERMISSIONS:
            return "refused"
        state, self.repo_id = _claim(
            self.run, self.repo, self.installation_id, self.pr_number, self.kind, self.question_id
        )
        if state == "limited":
            post(limited_message(self.run.settings.ask_limit_per_hour, user))
        return state

    def reconciled(self, said_before: Iterable[Comment | ReviewComment]) -> bool:
        """True when an earlier run posted the answer (its marker is among ``said_before``)
        but died before recording it; it is recorded now."""
        marker = answer_marker(self.question_id)
        if not any(marker in c.body for c in said_before):
            return False
        self._finish("answered", None)
        return True

    def deliver(self, body: str | None, post: Callable[[str], int]) -> str:
        """Post the answer (None: no model is configured) and record it."""
        if body is None:
            self._finish("skipped", None)
            return "no model"
        self._finish("answered", post(body))
        return "answered"

    def _finish(self, status: str, answer_id: int | None) -> None:
        with self.run.engine.begin() as conn:
            finish_conversation(conn, self.repo_id, self.kind, self.question_id, status, answer_id)


def _said(comment: ReviewComment) -> tuple[str, str]:
    return comment.author.login or "someone", _HIDDEN.sub("", comment.body).strip()


def _answer(
    run: Runtime,
    api: RepoHost,
    repo: str,
    pr: PullRequest,
    config: ReviewConfig,
    question: Question,
    query: str,
    question_id: int,
) -> str | None:
    """The answer's Markdown, from the PR's diff and the index searched for ``query``;
    None when no model is configured."""
    if not run.settings.model_configured("review"):
        log.warning(kv("answer.skipped", repo=repo, pr=pr.number, reason="no LLM configured"))
        return None
    ensure_indexed(run, api, repo, pr.base_sha)
    diffs = [d for d in parse_diff(api.pull_diff(pr.number)) if not config.excluded(d.path)]
    counter = token_counter()
    fitted = fit_diff(diffs, counter.usable(run.settings.diff_token_budget), counter.count)
    context = retrieve_for_question(
        run.engine,
        repo,
        query,
        select_embedder(run.settings),
        run.settings,
        render=render_context_block,
    )
    prompt = answer_prompt(question, pr.title, render_diff(fitted.files), context, config.language)
    answer = ask_text_model(
        make_openai_client(run.settings, "review"),
        run.settings.review_model,
        prompt,
        run.settings.answer_max_tokens,
        Deadline(run.settings.llm_job_budget_seconds),
    )
    model = run.settings.review_model
    tokens = (answer.prompt_tokens, answer.completion_tokens)
    spend(run, repo, pr.number, "answer", model, 1, *tokens)
    cost = cost_line(model, *tokens, model_prices(run.settings))
    link = run.host.permalinks(repo, pr.head_sha)
    return answer_markdown(answer.text, context, [d.path for d in diffs], link, question_id, cost)


def _claim(
    run: Runtime, repo: str, installation_id: int, pr_number: int, kind: str, question_id: int
) -> tuple[str, int]:
    """Claim the question: ``go`` (answer it), ``done`` (answered or refused before),
    ``limited`` (over the hourly limit: say so) or ``quiet`` (over it, and said)."""
    with run.engine.begin() as conn:
        repo_id = locked_repository(conn, repo, installation_id, conversation_lock(repo, pr_number))
        status = conversation_status(conn, repo_id, kind, question_id)
        if status == "answering":
            return "go", repo_id  # a retry: the marker check decides
        if status is not None:
            return "done", repo_id
        taken, turned_away = questions_last_hour(conn, repo_id, pr_number)
        over = taken >= run.settings.ask_limit_per_hour
        state = "limited" if over else "answering"
        start_conversation(conn, repo_id, pr_number, kind, question_id, state)
    if over:
        log.info(kv("answer.limited", repo=repo, pr=pr_number, kind=kind))
        return ("quiet" if turned_away else "limited"), repo_id
    return "go", repo_id

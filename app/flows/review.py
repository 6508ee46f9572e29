"""Review a pull request (or merge request) on its code host: once per head, comments
never repeated, never lost.

Intent is recorded before posting (a ``reviews`` row per repository, PR and head, status
``posting``); the review body carries a marker with the head SHA. A retry after a crash
or a timeout first looks for its own marker among the PR's reviews, so a review the host
already accepted is recorded, not posted again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum

from app.db.model_answers import PaidAnswers
from app.db.queries.repositories import indexed_commit, locked_repository
from app.db.queries.review_feedback import rejected_findings
from app.db.queries.reviews import (
    ReviewStatus,
    add_review_tokens,
    claim_review,
    finish_review,
    last_posted_head,
    posted_fingerprints,
    reopen_review,
    review_status,
)
from app.db.queries.usage import record_usage
from app.diff.parse import parse_diff
from app.flows.budget import over_budget as budget_spent
from app.flows.budget import spend
from app.flows.findings import gate_findings, posted_findings
from app.flows.index import ensure_indexed
from app.flows.posted_reviews import already_posted, marker
from app.flows.review_config import repository_review_config
from app.flows.threads import resolve_fixed_threads
from app.forge.models import InlineComment, PullRequest
from app.forge.protocol import CommentsRefused, RepoHost
from app.indexing.embedder import select_embedder
from app.llm.client import make_openai_client
from app.llm.fences import fence_for
from app.llm.prices import model_prices
from app.logs import kv
from app.review.budget import cost_line
from app.review.comments import ReviewComment
from app.review.config import SEVERITY_ORDER, ReviewConfig
from app.review.feedback import Rejected, finding_marker
from app.review.gate import gate_outcome
from app.review.markdown import inert, link_citations
from app.review.model import ReviewFormatError
from app.review.pipeline import (
    PreparedReview,
    ReviewResult,
    prepare_review,
    run_review,
    summary_markdown,
)
from app.review.triggers import PullFacts, skip_reason
from app.runtime import Runtime
from app.task_specs import review_lock
from app.wording import counted

log = logging.getLogger(__name__)


class ReviewOutcome(StrEnum):
    """What became of a review job (logged, shown on the check run)."""

    POSTED = "posted"
    CLOSED = "closed"
    AUTO_REVIEW_OFF = "auto review off"
    DRAFT = "draft"
    FILTERED = "filtered"
    OVER_BUDGET = "over budget"
    ALREADY_REVIEWED = "already reviewed"
    RECONCILED = "reconciled"
    NO_MODEL = "no model"


def review_pull_request(
    run: Runtime,
    repo: str,
    installation_id: int,
    pr_number: int,
    *,
    full: bool = False,
    over_budget: bool = False,
    job_id: int | None = None,
) -> ReviewOutcome:
    """Review the PR's current head; returns what happened (for logs and tests).
    ``full``: a ``/review``, whatever the trigger filters say; ``over_budget``: by an
    admin, whatever the budgets say."""
    api = run.host.repository(installation_id, repo)
    pr = api.pull(pr_number)
    if pr.state != "open":
        return ReviewOutcome.CLOSED
    config = repository_review_config(api, pr_number)
    if not full:  # `/review` (full) reviews whatever the settings say
        if not config.auto_review:
            return ReviewOutcome.AUTO_REVIEW_OFF
        drafts = run.settings.review_drafts if config.drafts is None else config.drafts
        if pr.draft and not drafts:
            return ReviewOutcome.DRAFT
        facts = PullFacts(pr.author, pr.labels, pr.base_ref, pr.head_ref, pr.title)
        reason = skip_reason(facts, config, run.settings)
        if reason is not None:
            log.info(kv("review.filtered", repo=repo, pr=pr_number, reason=reason))
            return ReviewOutcome.FILTERED
    if not over_budget and budget_spent(run, api, repo, installation_id, pr_number, config):
        return ReviewOutcome.OVER_BUDGET
    repo_id, previous_head, posted = _claim(
        run, repo, installation_id, pr_number, pr.head_sha, pr.base_sha, full
    )
    if repo_id is None:
        return ReviewOutcome.ALREADY_REVIEWED
    gate = config.gate or run.settings.review_gate
    checked = run.settings.github_check_runs or gate != "off"
    found = already_posted(api, pr_number, pr.head_sha)
    if found is not None:  # posted by an attempt that did not live to record it
        _reconcile(run, api, repo_id, pr, found, gate if checked else None)
        return ReviewOutcome.RECONCILED
    check = api.start_check(pr_number, pr.head_sha) if checked else None
    try:
        outcome, summary = _review(
            run, api, repo, repo_id, pr, previous_head, posted, full, job_id, config
        )
    except ReviewFormatError as exc:  # nothing to post, and asking again will not help
        _finish(run, repo_id, pr_number, pr.head_sha, ReviewStatus.FAILED)
        if check is not None:
            api.finish_check(check, "cancelled", "Review failed", str(exc))
        raise
    except Exception:
        if check is not None:
            api.finish_check(check, "cancelled", "Review failed", "The review will be retried.")
        raise
    if check is not None:
        try:
            _finish_check(api, check, pr_number, gate, outcome, summary)
        except Exception:  # the retry finds the review on the host and finishes the check
            with run.engine.begin() as conn:
                reopen_review(conn, repo_id, pr_number, pr.head_sha)
            raise
    return outcome


def _reconcile(
    run: Runtime,
    api: RepoHost,
    repo_id: int,
    pr: PullRequest,
    found: tuple[int, list[str]],
    gate: str | None,
) -> None:
    """Record the review of ``pr``'s head that the host already has, and (``gate``: the
    check is on) set its check from it: the attempt that posted it may have failed
    before it set the check, or set it as failed."""
    review_id, fingerprints = found
    if gate is not None:  # first: a failure leaves the review to be reconciled again
        check = api.start_check(pr.number, pr.head_sha)
        said = "The review was posted by an earlier attempt."
        _finish_check(api, check, pr.number, gate, ReviewOutcome.POSTED, said)
    _finish(run, repo_id, pr.number, pr.head_sha, ReviewStatus.POSTED, review_id, fingerprints)


def _finish_check(
    api: RepoHost, check: int, pr_number: int, gate: str, outcome: ReviewOutcome, summary: str
) -> None:
    """The check run's conclusion: the merge gate's when a review was written (counting
    every open finding of the bot on the PR), else neutral with what happened."""
    if outcome is not ReviewOutcome.POSTED or gate == "off":
        api.finish_check(check, "neutral", f"reviewbot: {outcome}", summary)
        return
    bar = {s for s in SEVERITY_ORDER if SEVERITY_ORDER.index(s) >= SEVERITY_ORDER.index(gate)}
    findings = gate_findings(api, pr_number, posted_findings(api, pr_number), bar)
    conclusion, title, said = gate_outcome(gate, findings)
    api.finish_check(check, conclusion, title, f"{said}\n\n{summary}")


def _review(
    run: Runtime,
    api: RepoHost,
    repo: str,
    repo_id: int,
    pr: PullRequest,
    previous_head: str | None,
    posted: list[str],
    full: bool,
    job_id: int | None,
    config: ReviewConfig,
) -> tuple[ReviewOutcome, str]:
    """Index if needed, build and post the review, then (after a push) resolve the
    threads the push fixed; returns (outcome, summary)."""
    pr_number = pr.number
    llm = (
        make_openai_client(run.settings, "review")
        if run.settings.model_configured("review")
        else None
    )
    if llm is None:  # nothing can be written: no retrieval, no index for it
        log.warning(kv("review.skipped", repo=repo, pr=pr_number, reason="no LLM configured"))
        _finish(run, repo_id, pr_number, pr.head_sha, ReviewStatus.SKIPPED)
        return ReviewOutcome.NO_MODEL, "No LLM is configured, so no review was written."
    ensure_indexed(run, api, repo, pr.base_sha)
    # After a push, review only the commits since the last reviewed head.
    incremental = previous_head is not None and not full
    since = previous_head if incremental else None
    prepared, rejected = _prepared(run, api, repo, repo_id, pr, since, config)
    paid = PaidAnswers.of_job(run.engine, job_id)  # a retry does not pay again
    result = run_review(llm, prepared, run.settings, posted, rejected, paid)
    _record_model_use(run, repo, repo_id, pr_number, pr.head_sha, result)
    comments = _post_and_record(run, api, repo, repo_id, pr, result, prepared, job_id)
    if incremental:
        fixed = resolve_fixed_threads(api, pr_number, pr.head_sha, llm, run.settings)
        model = run.settings.review_model
        spend(
            run, repo, pr_number, "review", model, 0, fixed.prompt_tokens, fixed.completion_tokens
        )
    return ReviewOutcome.POSTED, f"{counted(len(comments), 'inline comment')}.\n\n{result.summary}"


def _prepared(
    run: Runtime,
    api: RepoHost,
    repo: str,
    repo_id: int,
    pr: PullRequest,
    since: str | None,
    config: ReviewConfig,
) -> tuple[PreparedReview, Rejected]:
    """The review's diff (the commits since ``since``, else the whole PR), its context
    and prompt; with the query vectors' usage recorded (paid even if the review then
    fails) and what the repository turned down before."""
    if since is not None:
        old_ref, diff = since, api.compare_diff(since, pr.head_sha)
    else:
        old_ref, diff = pr.base_sha, api.pull_diff(pr.number)

    def read(path: str, side: str) -> bytes | None:
        return api.content(path, pr.head_sha if side == "new" else old_ref)

    embedder = select_embedder(run.settings)
    prepared = prepare_review(
        run.engine,
        repo,
        parse_diff(diff),
        read,
        title=pr.title,
        body=pr.body,
        embedder=embedder,
        settings=run.settings,
        config=config,
    )
    queried = [part.context.embedding_usage for part in prepared.parts]
    with run.engine.begin() as conn:
        calls, tokens = sum(q.calls for q in queried), sum(q.tokens for q in queried)
        record_usage(conn, repo_id, "embedding", embedder.model, calls, tokens)
        rejected = Rejected.of(rejected_findings(conn, repo_id))
    return prepared, rejected


def _post_and_record(
    run: Runtime,
    api: RepoHost,
    repo: str,
    repo_id: int,
    pr: PullRequest,
    result: ReviewResult,
    prepared: PreparedReview,
    job_id: int | None,
) -> list[ReviewComment]:
    """Post the review (its context linked at the commit the index holds) and record it
    as posted; the comments posted."""
    with run.engine.connect() as conn:
        indexed = indexed_commit(conn, repo) or pr.base_sha
    link = run.host.permalinks(repo, indexed)
    prices = model_prices(run.settings)
    review_id, comments = _post(api, pr.number, pr.head_sha, result, prepared, link, prices)
    fingerprints = [c.fingerprint for c in comments]
    _finish(run, repo_id, pr.number, pr.head_sha, ReviewStatus.POSTED, review_id, fingerprints)
    log.info(
        kv(
            "review.posted",
            repo=repo,
            pr=pr.number,
            head=pr.head_sha,
            job_id=job_id,
            comments=len(comments),
            calls=result.calls,
        )
    )
    return comments


def _claim(
    run: Runtime, repo: str, installation_id: int, pr_number: int, head: str, base: str, full: bool
) -> tuple[int | None, str | None, list[str]]:
    """Record the intent to review ``head``. Returns (repository id or None when this head
    is already reviewed, the last reviewed head of the PR, fingerprints already posted)."""
    with run.engine.begin() as conn:
        repo_id = locked_repository(conn, repo, installation_id, review_lock(repo, pr_number))
        done = {ReviewStatus.POSTED, ReviewStatus.SKIPPED}
        if review_status(conn, repo_id, pr_number, head) in done and not full:
            return None, None, []
        previous = last_posted_head(conn, repo_id, pr_number, head)
        posted = posted_fingerprints(conn, repo_id, pr_number)
        claim_review(conn, repo_id, pr_number, base, head)
    return repo_id, previous, posted


def _post(
    api: RepoHost,
    pr_number: int,
    head: str,
    result: ReviewResult,
    prepared: PreparedReview,
    permalink: Callable[[str, int, int], str],
    prices: Mapping[str, tuple[float, float]],
) -> tuple[int, list[ReviewComment]]:
    """Post one review; if the host refuses the inline comments, post them in the body."""
    cost = cost_line(
        result.model, result.prompt_tokens, result.completion_tokens, prices, result.calls
    )
    body = (
        summary_markdown(result, prepared, permalink)
        + f"\n\n<sub>This review: {cost}</sub>\n\n"
        + marker(head)
    )
    context_paths = {c.file_path for c in prepared.context_used}
    comments = [
        inline_comment(c, lambda text: link_citations(text, context_paths, permalink))
        for c in result.comments
    ]
    try:
        return api.create_review(pr_number, head, body, comments), result.comments
    except CommentsRefused:
        pass
    moved = "\n".join(
        f"- `{c.path}:{c.line}` **{inert(c.title)}**: {inert(c.body)}"
        f" {finding_marker(c.fingerprint)}"
        for c in result.comments
    )
    fallback = body.replace(marker(head), f"**Comments**\n{moved}\n\n{marker(head)}")
    log.warning(kv("review.inline_refused", pr=pr_number, comments=len(comments)))
    return api.create_review(pr_number, head, fallback, []), result.comments


def inline_comment(
    comment: ReviewComment, cite: Callable[[str], str] = lambda text: text
) -> InlineComment:
    """The inline comment posted for one finding: made inert, with ``cite`` linking the code
    elsewhere it cites; its marker lets feedback find it later."""
    body = f"**{comment.severity}: {inert(comment.title)}**\n\n{cite(inert(comment.body))}"
    if comment.suggestion:
        body += f"\n\n{fenced(comment.suggestion, 'suggestion')}"
    if comment.code:
        body += "\n\nA possible fix (the lines it replaces are not all in the diff):\n\n"
        body += fenced(comment.code)
    body += f"\n\n{finding_marker(comment.fingerprint)}"
    return InlineComment(comment.path, comment.line, comment.side, body, comment.start_line)


def fenced(code: str, info: str = "") -> str:
    """``code`` in a fence longer than any backtick run inside it."""
    fence = fence_for(code)
    return f"{fence}{info}\n{code}\n{fence}"


def _finish(
    run: Runtime,
    repo_id: int,
    pr_number: int,
    head: str,
    status: ReviewStatus,
    review_id: int | None = None,
    fingerprints: Sequence[str] = (),
) -> None:
    """Record how the review of ``head`` ended and what it posted."""
    with run.engine.begin() as conn:
        finish_review(conn, repo_id, pr_number, head, status, review_id, list(fingerprints))


def _record_model_use(
    run: Runtime, repo: str, repo_id: int, pr_number: int, head: str, result: ReviewResult
) -> None:
    """Add the review model's tokens to the review of ``head``, to the day's usage and
    to the PR's total, as soon as the model answered: an attempt that then fails to post
    has still paid."""
    tokens = (result.prompt_tokens, result.completion_tokens)
    with run.engine.begin() as conn:
        add_review_tokens(conn, repo_id, pr_number, head, result.model, *tokens)
    spend(run, repo, pr_number, "review", result.model, result.calls, *tokens)

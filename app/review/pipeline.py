"""One review, the same for the CLI and the GitHub App: diff -> context -> prompt -> model
-> validated comments."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import openai
from sqlalchemy import Engine

from app.config import Settings
from app.diff.changed import SourceReader, changed_functions
from app.diff.parse import FileDiff
from app.indexing.embedder import Embedder
from app.llm.pacing import MIN_ATTEMPT_SECONDS, Deadline
from app.llm.tokens import token_counter
from app.logs import kv
from app.retrieval.ranking import ContextChunk
from app.retrieval.retrieve import ContextResult, retrieve_context
from app.review.comments import ReviewComment, validate_comments
from app.review.config import ReviewConfig
from app.review.diff_text import FittedDiff, fit_diff, render_diff
from app.review.feedback import Rejected
from app.review.markdown import inert
from app.review.model import ReviewFormatError, ReviewModelError, ask_review_model
from app.review.prompt import REPAIR, ReviewPrompt, build_prompt

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PreparedReview:
    """Everything up to the model call; a dry run stops here."""

    diffs: list[FileDiff]
    context: ContextResult
    fitted: FittedDiff
    prompt: ReviewPrompt
    prompt_tokens: int
    token_counter: str
    config: ReviewConfig = field(default_factory=ReviewConfig)
    excluded: tuple[str, ...] = ()  # paths the repository's [review] exclude left out

    def as_json(self) -> dict[str, object]:
        return {
            **self.context.as_json(),
            "diff_tokens": self.fitted.tokens,
            "omitted": self.fitted.omitted,
            "prompt_tokens": self.prompt_tokens,
            "prompt": {"system": self.prompt.system, "user": self.prompt.user},
        }


@dataclass(frozen=True)
class ReviewResult:
    summary: str
    comments: list[ReviewComment]
    moved_to_summary: list[str]
    dropped: int
    model: str
    prompt_tokens: int
    completion_tokens: int

    def as_json(self) -> dict[str, object]:
        return {
            "summary": self.summary,
            "comments": [c.as_json() for c in self.comments],
            "moved_to_summary": self.moved_to_summary,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


def prepare_review(
    engine: Engine,
    repo: str,
    diffs: list[FileDiff],
    read: SourceReader,
    *,
    title: str,
    body: str,
    embedder: Embedder,
    settings: Settings,
    llm: openai.OpenAI | None = None,
    config: ReviewConfig | None = None,
) -> PreparedReview:
    """Changed functions, retrieved context, the diff cut to its budget, and the prompt.
    ``config``: the repository's ``[review]`` table (excluded paths, policy)."""
    config = config or ReviewConfig()
    excluded = tuple(d.path for d in diffs if config.excluded(d.path))
    diffs = [d for d in diffs if d.path not in excluded]
    changed = changed_functions(diffs, read)
    context = retrieve_context(engine, repo, diffs, changed, embedder, settings, llm=llm)
    counter = token_counter()
    fitted = fit_diff(diffs, counter.usable(settings.diff_token_budget), counter.count)
    policy = config.policy([d.path for d in diffs])
    prompt = build_prompt(
        title, body, render_diff(fitted.files), context.context, fitted.omitted, policy
    )
    tokens = counter.count(prompt.system) + counter.count(prompt.user)
    return PreparedReview(diffs, context, fitted, prompt, tokens, counter.name, config, excluded)


def run_review(
    client: openai.OpenAI,
    prepared: PreparedReview,
    settings: Settings,
    already_posted: Iterable[str] = (),
    rejected: Rejected | None = None,
) -> ReviewResult:
    """Ask the review model and keep the comments GitHub will accept, leaving out the
    findings the repository ``rejected`` before. All the model calls (format probes,
    retries, the repair) end within the job's budget."""
    deadline = Deadline(settings.llm_job_budget_seconds)
    answer = ask_review_model(
        client, settings.review_model, prepared.prompt, settings.review_max_tokens, deadline
    )
    if not answer.review.usable:  # asked once more, with the format spelled out
        log.warning(kv("review.format_ignored", model=settings.review_model))
        repaired = replace(prepared.prompt, repair=REPAIR)
        try:
            answer = ask_review_model(
                client, settings.review_model, repaired, settings.review_max_tokens, deadline
            )
        except ReviewModelError as exc:
            if deadline.remaining() >= MIN_ATTEMPT_SECONDS:  # not the budget: say what it was
                raise
            raise ReviewFormatError(
                f"the model ({settings.review_model}) did not follow the review format, and"
                f" the review's time budget ({deadline.seconds:g} s) ran out before it"
                f" answered again ({exc}): no review was written"
            ) from None
        if not answer.review.usable:
            raise ReviewFormatError(
                f"the model ({settings.review_model}) did not follow the review format,"
                " twice: no review was written"
            )
    config = prepared.config
    wanted = [c for c in answer.review.comments if config.keeps(str(c.get("severity", "")).lower())]
    cap = settings.max_review_comments if config.max_comments is None else config.max_comments
    checked = validate_comments(
        wanted, prepared.diffs, cap, already_posted, (rejected or Rejected()).rejects
    )
    return ReviewResult(
        summary=answer.review.summary,
        comments=checked.comments,
        moved_to_summary=checked.moved_to_summary,
        dropped=checked.dropped,
        model=settings.review_model,
        prompt_tokens=answer.prompt_tokens,
        completion_tokens=answer.completion_tokens,
    )


#: Why a context item was packed, by the signals that found it.
WHY = {"structural": "linked", "vector": "similar code", "lexical": "shares names"}


def summary_markdown(
    result: ReviewResult,
    prepared: PreparedReview,
    permalink: Callable[[str, int, int], str] | None = None,
) -> str:
    """The review body: summary, notes that could not be inline, what was reviewed, and
    the context used (as ``permalink(path, start, end)`` links when given). Whatever the
    model wrote is made inert: no raw HTML, no @mentions."""
    parts = [inert(result.summary.strip()) or "No summary."]
    if result.moved_to_summary:
        parts.append(
            "**Notes outside the diff**\n"
            + "\n".join(f"- {inert(m)}" for m in result.moved_to_summary)
        )
    reviewed = [d.path for d in prepared.fitted.files]
    parts.append(
        f"<details><summary>Reviewed {len(reviewed)} file(s)</summary>\n\n"
        + "\n".join(f"- `{p}`" for p in reviewed)
        + "\n</details>"
    )
    if prepared.excluded:
        parts.append(
            "**Not reviewed** (`exclude` in `.reviewbot.toml`)\n"
            + "\n".join(f"- `{p}`" for p in prepared.excluded)
        )
    if prepared.fitted.omitted:
        parts.append(
            "**Skipped to fit the budget**\n" + "\n".join(f"- {o}" for o in prepared.fitted.omitted)
        )
    used = [_context_line(c, permalink) for c in prepared.context.context]
    if used:
        parts.append(
            "<details><summary>Context used</summary>\n\n" + "\n".join(used) + "\n</details>"
        )
    return "\n\n".join(parts)


def _context_line(chunk: ContextChunk, permalink: Callable[[str, int, int], str] | None) -> str:
    where = f"`{chunk.file_path}:{chunk.start_line}-{chunk.end_line}`"
    if permalink is not None:
        where = f"[{where}]({permalink(chunk.file_path, chunk.start_line, chunk.end_line)})"
    name = chunk.qualified_name or chunk.symbol_name
    symbol = f" `{name}`" if name and name != chunk.file_path else ""
    why = ", ".join(said for signal, said in WHY.items() if signal in chunk.signals)
    return f"- {where}{symbol}" + (f" ({why})" if why else "")

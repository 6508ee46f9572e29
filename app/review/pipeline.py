"""One review, the same for the CLI and the GitHub App: diff -> context -> prompt -> model
-> validated comments."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace

import openai
from sqlalchemy import Engine

from app.config import Settings
from app.db.model_answers import PaidAnswers
from app.diff.changed import ChangedFunction, SourceReader, changed_functions
from app.diff.parse import FileDiff
from app.indexing.embedder import Embedder
from app.llm.pacing import MIN_ATTEMPT_SECONDS, Deadline
from app.llm.tokens import token_counter
from app.logs import kv
from app.retrieval.context_chunk import ContextChunk
from app.retrieval.retrieve import ContextResult, retrieve_context
from app.review.comments import ReviewComment, validate_comments
from app.review.config import ReviewConfig
from app.review.context_blocks import render_context_block
from app.review.diff_text import FittedDiff, fit_diff, render_diff
from app.review.feedback import Rejected
from app.review.groups import plan_groups
from app.review.markdown import inert
from app.review.model import ModelAnswer, ReviewFormatError, ReviewModelError, ask_review_model
from app.review.prompt import REPAIR, ReviewPrompt, build_prompt
from app.review.tool_findings import fuse, render_tool_findings, tools_markdown
from app.review.walkthrough import FileChange, walkthrough, walkthrough_markdown
from app.tools.stage import ToolReport, run_tools
from app.wording import counted

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReviewPart:
    """The files of one model call, with their own context and prompt."""

    diffs: list[FileDiff]
    context: ContextResult
    fitted: FittedDiff
    prompt: ReviewPrompt
    prompt_tokens: int


@dataclass(frozen=True)
class PreparedReview:
    """Everything up to the model calls; a dry run stops here. A PR that fits one call is
    one part; a larger one is split (``app/review/groups.py``)."""

    diffs: list[FileDiff]
    changed: list[ChangedFunction]
    parts: list[ReviewPart]
    token_counter: str
    config: ReviewConfig = field(default_factory=ReviewConfig)
    excluded: tuple[str, ...] = ()  # paths the repository's [review] exclude left out
    not_reviewed: tuple[str, ...] = ()  # "path: why", files a split review left out
    tools: ToolReport = field(default_factory=ToolReport)  # the linters' and scanner's

    @property
    def context(self) -> ContextResult:
        """The first part's context (the whole PR's, when it is one part)."""
        return self.parts[0].context if self.parts else ContextResult([], [], 0, 0, "")

    @property
    def fitted(self) -> FittedDiff:
        return self.parts[0].fitted if self.parts else FittedDiff([], [], 0)

    @property
    def prompt(self) -> ReviewPrompt:
        return self.parts[0].prompt if self.parts else ReviewPrompt("", "")

    @property
    def prompt_tokens(self) -> int:
        return sum(p.prompt_tokens for p in self.parts)

    @property
    def context_used(self) -> list[ContextChunk]:
        """Every part's context, each chunk once."""
        seen: dict[int, ContextChunk] = {}
        for part in self.parts:
            for chunk in part.context.context:
                seen.setdefault(chunk.chunk_id, chunk)
        return list(seen.values())

    @property
    def omitted(self) -> list[str]:
        return [o for p in self.parts for o in p.fitted.omitted] + list(self.not_reviewed)

    def as_json(self) -> dict[str, object]:
        return {
            **self.context.as_json(),
            "calls": len(self.parts),
            "diff_tokens": sum(p.fitted.tokens for p in self.parts),
            "omitted": self.omitted,
            "prompt_tokens": self.prompt_tokens,
            "prompt": {"system": self.prompt.system, "user": self.prompt.user},
            "tools": tools_json(self.tools),
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
    walkthrough: list[FileChange] = field(default_factory=list)
    calls: int = 1
    dismissed: list[str] = field(default_factory=list)  # tool findings the model dismissed

    def as_json(self) -> dict[str, object]:
        return {
            "summary": self.summary,
            "walkthrough": [asdict(row) for row in self.walkthrough],
            "comments": [c.as_json() for c in self.comments],
            "moved_to_summary": self.moved_to_summary,
            "model": self.model,
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "dismissed_tool_findings": self.dismissed,
        }


def tools_json(report: ToolReport) -> dict[str, object]:
    return {
        "findings": [asdict(f) for f in report.findings],
        "runs": [asdict(r) for r in report.runs],
        "skipped": report.skipped,
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
    config: ReviewConfig | None = None,
) -> PreparedReview:
    """Changed functions, then per part (one, unless the diff is larger than its budget)
    the retrieved context, the diff cut to its budget and the prompt, with the tools'
    findings on its lines. ``config``: the repository's ``[review]`` and ``[tools]``
    tables (excluded paths, policy, ``max_review_calls``, the tools to run)."""
    config = config or ReviewConfig()
    excluded = tuple(d.path for d in diffs if config.excluded(d.path))
    diffs = [d for d in diffs if d.path not in excluded]
    read = _remembered(read)
    counter = token_counter()
    budget = counter.usable(settings.diff_token_budget)
    calls = config.max_review_calls or settings.max_review_calls
    with ThreadPoolExecutor(max_workers=1) as beside:  # the tools run while context is found
        running = beside.submit(run_tools, diffs, lambda path: read(path, "new"), config.tools)
        changed = changed_functions(diffs, read)
        plan = plan_groups(diffs, changed, budget, calls, counter.count)
        contexts = [
            retrieve_context(
                engine,
                repo,
                group,
                [c for c in changed if c.file_path in _paths(group)],
                embedder,
                settings,
                render=render_context_block,
            )
            for group in plan.groups
        ]
        tools = running.result()
    numbered = list(enumerate(tools.findings))
    parts = []
    for group, context in zip(plan.groups, contexts, strict=True):
        fitted = fit_diff(group, budget, counter.count)
        prompt = build_prompt(
            title,
            body,
            render_diff(fitted.files),
            context.context,
            fitted.omitted,
            config.policy([d.path for d in group]),
            render_tool_findings((i, f) for i, f in numbered if f.path in _paths(group)),
        )
        tokens = counter.count(prompt.system) + counter.count(prompt.user)
        parts.append(ReviewPart(group, context, fitted, prompt, tokens))
    if not parts:  # nothing to review: still one (empty) part, for the summary
        empty = ContextResult([], [], 0, settings.context_token_budget, counter.name)
        prompt = build_prompt(title, body, "", [], [], config.policy([]))
        tokens = counter.count(prompt.system) + counter.count(prompt.user)
        parts.append(ReviewPart([], empty, FittedDiff([], [], 0), prompt, tokens))
    return PreparedReview(
        diffs, changed, parts, counter.name, config, excluded, tuple(plan.not_reviewed), tools
    )


def _paths(group: Sequence[FileDiff]) -> set[str]:
    return {d.path for d in group}


def _remembered(read: SourceReader) -> SourceReader:
    """``read`` asked once per file and side (the changed functions and the tools both
    read the head of a changed file)."""
    known: dict[tuple[str, str], bytes | None] = {}

    def remembered(path: str, side: str) -> bytes | None:
        if (path, side) not in known:
            known[(path, side)] = read(path, side)
        return known[(path, side)]

    return remembered


def run_review(
    client: openai.OpenAI,
    prepared: PreparedReview,
    settings: Settings,
    already_posted: Iterable[str] = (),
    rejected: Rejected | None = None,
    paid: PaidAnswers | None = None,
) -> ReviewResult:
    """Ask the review model once per part and keep the comments GitHub will accept,
    leaving out the findings the repository ``rejected`` before; findings of all parts
    are merged, repeats dropped and the best kept under ``max_comments``. All the calls
    (format probes, retries, repairs) end within the job's budget; with ``paid``, an
    answer a failed attempt already paid for is reused."""
    deadline = Deadline(settings.llm_job_budget_seconds)
    answers = [ask_part(client, part.prompt, settings, deadline, paid) for part in prepared.parts]
    config = prepared.config
    wanted = [
        c
        for answer in answers
        for c in answer.review.comments
        if config.keeps(str(c.get("severity", "")).lower())
    ]
    verdicts = [v for answer in answers for v in answer.review.tool_verdicts]
    fused = fuse(prepared.tools.findings, verdicts, wanted)
    cap = settings.max_review_comments if config.max_comments is None else config.max_comments
    checked = validate_comments(
        [*fused.tool_comments, *fused.model_comments],
        prepared.diffs,
        cap,
        already_posted,
        (rejected or Rejected()).rejects,
    )
    if len(answers) == 1:
        summary = answers[0].review.summary
    else:
        summary = "\n\n".join(
            f"**Part {i}** ({_files(part.diffs)}): {answer.review.summary.strip()}"
            for i, (part, answer) in enumerate(zip(prepared.parts, answers, strict=True), 1)
        )
    written = [row for answer in answers for row in answer.review.walkthrough]
    return ReviewResult(
        summary=summary,
        comments=checked.comments,
        moved_to_summary=checked.moved_to_summary,
        dropped=checked.dropped,
        model=settings.review_model,
        prompt_tokens=sum(a.prompt_tokens for a in answers),
        completion_tokens=sum(a.completion_tokens for a in answers),
        walkthrough=walkthrough(prepared.diffs, prepared.changed, written),
        calls=len(answers),
        dismissed=fused.dismissed,
    )


def ask_part(
    client: openai.OpenAI,
    prompt: ReviewPrompt,
    settings: Settings,
    deadline: Deadline,
    paid: PaidAnswers | None = None,
) -> ModelAnswer:
    """One part's answer; asked once more, with the format spelled out, if the first
    answer ignored it."""
    answer = ask_review_model(
        client, settings.review_model, prompt, settings.review_max_tokens, deadline, paid
    )
    if answer.review.usable:
        return answer
    log.warning(kv("review.format_ignored", model=settings.review_model))
    repaired = replace(prompt, repair=REPAIR)
    try:
        answer = ask_review_model(
            client, settings.review_model, repaired, settings.review_max_tokens, deadline, paid
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
    return answer


def _files(diffs: Sequence[FileDiff]) -> str:
    shown = ", ".join(f"`{d.path}`" for d in diffs[:3])
    return shown + (f" and {len(diffs) - 3} more" if len(diffs) > 3 else "")


def summary_markdown(
    result: ReviewResult,
    prepared: PreparedReview,
    permalink: Callable[[str, int, int], str] | None = None,
) -> str:
    """The review body: summary, notes that could not be inline, what was reviewed, and
    the context used (as ``permalink(path, start, end)`` links when given). Whatever the
    model wrote is made inert: no raw HTML, no @mentions."""
    parts = [inert(result.summary.strip()) or "No summary."]
    table = walkthrough_markdown(result.walkthrough)
    if table:
        parts.append(f"**Walkthrough**\n\n{table}")
    if result.moved_to_summary:
        parts.append(
            "**Notes outside the diff**\n"
            + "\n".join(f"- {inert(m)}" for m in result.moved_to_summary)
        )
    reviewed = [d.path for part in prepared.parts for d in part.fitted.files]
    calls = f" in {result.calls} model calls" if result.calls > 1 else ""
    parts.append(
        f"<details><summary>Reviewed {counted(len(reviewed), 'file')}{calls}</summary>\n\n"
        + "\n".join(f"- `{p}`" for p in reviewed)
        + "\n</details>"
    )
    if prepared.excluded:
        parts.append(
            "**Not reviewed** (`exclude` in `.reviewbot.toml`)\n"
            + "\n".join(f"- `{p}`" for p in prepared.excluded)
        )
    if prepared.omitted:
        parts.append(
            "**Not reviewed, to fit the budget**\n" + "\n".join(f"- {o}" for o in prepared.omitted)
        )
    tools = tools_markdown(prepared.tools, result.dismissed)
    if tools:
        parts.append(tools)
    used = [_context_line(c, permalink) for c in prepared.context_used]
    notes = list(dict.fromkeys(n for part in prepared.parts for n in part.context.notes))
    if used or notes:
        parts.append(
            "<details><summary>Context used</summary>\n\n"
            + "".join(f"_{n}_\n\n" for n in notes)
            + "\n".join(used)
            + "\n</details>"
        )
    return "\n\n".join(parts)


def _context_line(chunk: ContextChunk, permalink: Callable[[str, int, int], str] | None) -> str:
    where = f"`{chunk.file_path}:{chunk.start_line}-{chunk.end_line}`"
    if permalink is not None:
        where = f"[{where}]({permalink(chunk.file_path, chunk.start_line, chunk.end_line)})"
    name = chunk.qualified_name or chunk.symbol_name
    symbol = f" `{name}`" if name and name != chunk.file_path else ""
    why = ", ".join(chunk.evidence.reasons())
    return f"- {where}{symbol}" + (f" ({why})" if why else "")

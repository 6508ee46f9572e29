"""How CLI results look in a terminal (rich). Pure: data in, renderables out."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from app.db.engine import OpenDatabase
from app.db.queries.review_feedback import FeedbackRow
from app.git import LocalRepo
from app.indexing.indexer import IndexReport
from app.retrieval.retrieve import ContextResult
from app.retrieval.vector_search import SearchHit
from app.review.pipeline import PreparedReview, ReviewResult
from app.wording import counted


class RichProgress:
    """The indexer's progress as rich bars: files, chunks, summaries, embeddings."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def start(self, stage: str, total: int | None) -> None:
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(stage, total=total)
        elif total is not None:
            task = self.progress.tasks[self.tasks[stage]]
            self.progress.update(self.tasks[stage], total=(task.total or 0) + total)

    def advance(self, stage: str, amount: int = 1) -> None:
        if stage in self.tasks:
            self.progress.advance(self.tasks[stage], amount)


def progress_bars() -> Progress:
    """Progress on stderr: stdout holds only the command's result (a review, a table, JSON),
    and nothing (not even the blank line a finished bar leaves) before an error."""
    return Progress(
        TextColumn("{task.description:>10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        console=Console(stderr=True),
    )


def index_table(report: IndexReport) -> Table:
    data = report.as_json()
    files, chunks = data["files"], data["chunks"]
    summaries, embeddings = data["summaries"], data["embeddings"]
    assert isinstance(files, dict) and isinstance(chunks, dict)
    assert isinstance(summaries, dict) and isinstance(embeddings, dict)
    title = f"{'estimate for ' if report.estimate else ''}index of {report.repo}"
    table = Table(title=title, show_header=False, title_justify="left")
    skipped = ", ".join(f"{k} {v}" for k, v in files["skipped"].items()) or "none"
    table.add_row(
        "files",
        f"{files['seen']} seen, {files['changed']} changed, {files['unchanged']} unchanged, "
        f"{files['deleted']} deleted; skipped: {skipped}",
    )
    table.add_row(
        "chunks",
        f"{chunks['added']} added, {chunks['updated']} updated, {chunks['deleted']} deleted, "
        f"{chunks['reused']} reused; {chunks['total']} in the index",
    )
    table.add_row(
        "summaries",
        f"{summaries['model']}: {summaries['llm']} by LLM, {summaries['heuristic']} heuristic, "
        f"{summaries['cached']} cached; {summaries['calls']} calls, "
        f"{summaries['prompt_tokens']} + {summaries['completion_tokens']} tokens",
    )
    table.add_row(
        "embeddings",
        f"{embeddings['model']}: {embeddings['computed']} computed, {embeddings['cached']} cached, "
        f"{embeddings['missing']} missing; {embeddings['calls']} calls, "
        f"{embeddings['tokens']} tokens",
    )
    table.add_row("wall time", f"{report.wall_seconds:.2f} s")
    for error in report.errors:
        table.add_row("[yellow]warning[/]", error)
    return table


def search_table(hits: list[SearchHit]) -> Table:
    table = Table("score", "where", "symbol", "summary")
    for hit in hits:
        table.add_row(
            f"{hit.score:.3f}",
            f"{hit.file_path}:{hit.start_line}-{hit.end_line}",
            f"{hit.qualified_name or hit.symbol_name or ''} ({hit.chunk_type})",
            (hit.summary or "")[:160],
        )
    return table


def context_table(result: ContextResult) -> Table:
    changed = ", ".join(
        f"{c.file_path}:{c.chunk.start_line}-{c.chunk.end_line} {c.qualified_name}"
        for c in result.changed
    )
    table = Table(
        "relevance",
        "where",
        "symbol",
        "tokens",
        "signals",
        title=f"context for {changed or 'no changed functions'}",
        caption=f"{result.tokens_used}/{result.budget} tokens ({result.token_counter})",
    )
    for c in result.context:
        table.add_row(
            f"{c.relevance:.1%}",
            f"{c.file_path}:{c.start_line}-{c.end_line}",
            f"{c.qualified_name or c.symbol_name or ''} ({c.chunk_type})",
            str(c.tokens),
            ",".join(c.signals),
        )
    return table


def prompt_text(prepared: PreparedReview) -> str:
    """The prompt exactly as the model would get it, as plain text under two headers.

    Plain on purpose: panels crop lines at the terminal width, and a user checking what
    the model sees must see all of it. The terminal wraps long lines; nothing is cut.
    """
    counts = (
        f"prompt {prepared.prompt_tokens} tokens ({prepared.token_counter}): diff "
        f"{prepared.fitted.tokens}, context {prepared.context.tokens_used}/"
        f"{prepared.context.budget}, {len(prepared.context.context)} chunks"
    )
    return "\n".join(
        [
            "===== system prompt =====",
            prepared.prompt.system.rstrip("\n"),
            "===== user prompt =====",
            prepared.prompt.user.rstrip("\n"),
            "=====",
            counts,
            *tool_lines(prepared),
        ]
    )


def tool_lines(prepared: PreparedReview) -> list[str]:
    """The tools' findings and problems, as proven without a model."""
    report = prepared.tools
    if not report.runs:
        return []
    lines = ["===== tool findings on the changed lines ====="]
    lines += [
        f"{f.path}:{f.line} {f.severity} {f.tool} {f.rule}: {f.message}"
        + (f" ({f.url})" if f.url else "")
        for f in report.findings
    ] or ["(none)"]
    lines += [f"problem: {p}" for p in report.problems]
    lines += [f"not checked: {s}" for s in report.skipped]
    return lines


SEVERITY_STYLE = {"critical": "bold red", "major": "red", "minor": "yellow", "nit": "dim"}


def review_view(
    result: ReviewResult, prepared: PreparedReview, git: LocalRepo, head: str | None
) -> RenderableType:
    parts: list[RenderableType] = [Panel(Text(result.summary or "(no summary)"), title="summary")]
    for comment in result.comments:
        source = git.read(head, comment.path) or b""
        lines = source.decode("utf-8", "replace").split("\n")
        start = max(1, comment.line - 2)
        code = "\n".join(lines[start - 1 : comment.line + 2])
        style = SEVERITY_STYLE.get(comment.severity, "")
        where = f"{escape(comment.path)}:{comment.line}"
        title = f"[{style}]{comment.severity}[/] {where} {escape(comment.title)}"
        body: list[RenderableType] = [
            Syntax(
                code,
                Syntax.guess_lexer(comment.path, code),
                line_numbers=True,
                start_line=start,
                highlight_lines={comment.line},
            ),
            Text(comment.body),
        ]
        if comment.suggestion:
            body.append(Text("suggestion:\n" + comment.suggestion, style="green"))
        parts.append(Panel(Group(*body), title=title, title_align="left"))
    for note in result.moved_to_summary:
        parts.append(Text(f"note (not on a diff line): {note}", style="dim"))
    parts.append(
        Text(
            f"{counted(len(result.comments), 'comment')}; context"
            f" {counted(len(prepared.context.context), 'chunk')}, "
            f"{prepared.context.tokens_used} tokens; model {result.model}",
            style="bold",
        )
    )
    return Group(*parts)


def feedback_table(repo: str, rows: list[FeedbackRow]) -> Table:
    """``reviewbot feedback list``: one row per comment, rejected first."""
    table = Table(title=f"Feedback on reviewbot's comments in {escape(repo)}")
    for column in ("verdict", "PR", "path", "title", "👍", "👎", "resolved"):
        table.add_column(column)
    for row in sorted(rows, key=lambda r: (r.verdict != "rejected", -r.pr_number)):
        table.add_row(
            row.verdict,
            str(row.pr_number),
            escape(row.path),
            escape(row.title_key),
            str(row.thumbs_up),
            str(row.thumbs_down),
            "yes" if row.resolved else "",
        )
    if not rows:
        table.caption = "nothing learned yet"
    return table


def database_table(opened: OpenDatabase, revision: str | None, head: str | None) -> Table:
    """``reviewbot db``: which database, its versions and its schema revision."""
    table = Table(show_header=False, box=None)
    table.add_row("database", opened.target.display)
    table.add_row("embedded", "yes" if opened.target.embedded else "no")
    table.add_row("postgresql", opened.info.server_version)
    table.add_row("pgvector", opened.info.pgvector_version or "not installed")
    table.add_row("schema", f"{revision} (head {head})")
    return table

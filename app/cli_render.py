"""How CLI results look in a terminal (rich). Pure: data in, renderables out."""

from __future__ import annotations

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from app.indexing.indexer import IndexReport
from app.retrieval.search import SearchHit


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
    return Progress(
        TextColumn("{task.description:>10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
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

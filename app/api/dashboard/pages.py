"""The dashboard's pages (GET): overview, repositories, one repository, reviews, jobs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from app.api.dashboard.chart import Bar, bar_chart
from app.api.dashboard.guard import OperatorDep
from app.api.dashboard.present import dollars, number
from app.api.dashboard.spend import SpendDay, spend_by_day
from app.api.dashboard.web import PAGE_SIZE, render
from app.api.deps import EngineDep, SettingsDep
from app.db.queries.chunks import chunk_code
from app.db.queries.index_runs import index_run_page
from app.db.queries.jobs import STATUSES, job_counts, job_page
from app.db.queries.repositories import find_repository, repository, repository_page, totals
from app.db.queries.review_feedback import feedback_by_prefix
from app.db.queries.reviews import review_counts, review_page
from app.db.queries.usage import daily_usage, installations_today, top_pull_requests
from app.errors import ReviewbotError
from app.indexing.embedder import select_embedder
from app.llm.prices import model_prices
from app.retrieval.retrieve import search_question
from app.review.feedback import title_key
from app.runtime import Runtime
from app.tools.catalog import TOOL_NAMES
from app.tools.versions import installed_tools

router = APIRouter(prefix="/admin")
SPEND_DAYS = 14
#: What a redirect after a form may say (by code, so no text is reflected from the URL).
NOTICES = {
    "queued": "Index job queued.",
    "already-queued": "An index job for this repository was already waiting.",
    "no-installation": "This repository was indexed from the CLI: re-index it there.",
    "retried": "Job queued again.",
    "superseded": "A newer job for the same work is already waiting; this one was left.",
    "cancelled": "Job cancelled.",
    "not-allowed": "That job is not in a state where this can be done.",
}
Notice = Annotated[str | None, Query(max_length=32)]
Before = Annotated[int | None, Query(ge=1)]


@router.get("")
def overview(
    request: Request, operator: OperatorDep, engine: EngineDep, settings: SettingsDep
) -> Response:
    with engine.connect() as conn:
        found, reviews, jobs = totals(conn), review_counts(conn), job_counts(conn)
        usage = daily_usage(conn, SPEND_DAYS)
        installations, pulls = installations_today(conn), top_pull_requests(conn)
    spend = spend_by_day(usage, model_prices(settings), datetime.now(UTC).date(), SPEND_DAYS)
    context = _page(
        operator,
        "overview",
        totals=found,
        reviews=reviews,
        jobs=jobs,
        spend=spend,
        chart=spend_chart(spend),
        installations=installations,
        pulls=pulls,
        per_day=settings.budget_tokens_per_day,
        per_pr=settings.budget_tokens_per_pr,
    )
    return render(request, "overview.html", context)


def spend_chart(spend: list[SpendDay]) -> Any:
    bars = [
        Bar(
            d.day.strftime("%d"),
            d.cost,
            f"{d.day:%Y-%m-%d}: {dollars(d.cost)}, {number(d.calls)} calls,"
            f" {number(d.tokens)} tokens",
        )
        for d in spend
    ]
    return bar_chart(bars, f"Estimated model spend per day, last {len(spend)} days")


@router.get("/repositories")
def repositories(
    request: Request,
    operator: OperatorDep,
    engine: EngineDep,
    after: Annotated[str | None, Query(max_length=255)] = None,
    notice: Notice = None,
) -> Response:
    with engine.connect() as conn:
        rows = repository_page(conn, PAGE_SIZE + 1, after)
    more = rows[PAGE_SIZE - 1].full_name if len(rows) > PAGE_SIZE else None
    context = _page(operator, "repositories", notice, repositories=rows[:PAGE_SIZE], more=more)
    return render(request, "repositories.html", context)


@router.get("/repositories/{repo_id}")
def repository_detail(
    request: Request,
    repo_id: int,
    operator: OperatorDep,
    engine: EngineDep,
    settings: SettingsDep,
    q: Annotated[str | None, Query(max_length=500)] = None,
    before: Before = None,
    notice: Notice = None,
) -> Response:
    with engine.connect() as conn:
        repo = repository(conn, repo_id)
        if repo is None:
            return render(request, "missing.html", _page(operator, "repositories"), status=404)
        runs = index_run_page(conn, repo_id, PAGE_SIZE + 1, before)
        prefixes = {name: title_key(name) for name in TOOL_NAMES}
        told = feedback_by_prefix(conn, repo_id, prefixes)
    versions = installed_tools()
    tools = [(name, versions.get(name), *told[name]) for name in TOOL_NAMES]
    hits, code, error = [], {}, None
    if q and q.strip():
        try:
            hits = search_question(
                engine, repo.full_name, q.strip(), select_embedder(settings), settings, k=10
            )
        except ReviewbotError as exc:
            error = str(exc)
        with engine.connect() as conn:
            code = chunk_code(conn, [h.chunk_id for h in hits])
    context = _page(
        operator,
        "repositories",
        notice,
        repo=repo,
        runs=runs[:PAGE_SIZE],
        more=runs[PAGE_SIZE - 1].id if len(runs) > PAGE_SIZE else None,
        skipped=repo.last_run.skipped if repo.last_run else {},
        q=q or "",
        hits=hits,
        code=code,
        search_error=error,
        tools=tools,
    )
    return render(request, "repository.html", context)


@router.get("/reviews")
def reviews(
    request: Request,
    operator: OperatorDep,
    engine: EngineDep,
    settings: SettingsDep,
    repo: Annotated[str | None, Query(max_length=255)] = None,
    before: Before = None,
) -> Response:
    with engine.connect() as conn:
        repo_id = find_repository(conn, repo) if repo else None
        rows = [] if repo and repo_id is None else review_page(conn, PAGE_SIZE + 1, before, repo_id)
    context = _page(
        operator,
        "reviews",
        pull_url=Runtime(settings, engine).host.pull_url,  # each on its own host's pages
        reviews=rows[:PAGE_SIZE],
        repo=repo or "",
        unknown_repo=bool(repo) and repo_id is None,
        more=rows[PAGE_SIZE - 1].id if len(rows) > PAGE_SIZE else None,
    )
    return render(request, "reviews.html", context)


@router.get("/jobs")
def jobs(
    request: Request,
    operator: OperatorDep,
    engine: EngineDep,
    settings: SettingsDep,
    status: Annotated[str | None, Query(pattern="^(" + "|".join(STATUSES) + ")$")] = None,
    before: Before = None,
    notice: Notice = None,
) -> Response:
    with engine.connect() as conn:
        counts = job_counts(conn)
        rows = job_page(
            conn,
            PAGE_SIZE + 1,
            status=status,
            before_id=before,
            alive_seconds=settings.stalled_worker_seconds,
        )
    context = _page(
        operator,
        "jobs",
        notice,
        jobs=rows[:PAGE_SIZE],
        counts=counts,
        statuses=STATUSES,
        status=status,
        more=rows[PAGE_SIZE - 1].id if len(rows) > PAGE_SIZE else None,
    )
    return render(request, "jobs.html", context)


def _page(operator: Any, section: str, notice: str | None = None, **context: Any) -> dict[str, Any]:
    """What every page's template gets: the section for the menu, the forms' CSRF token,
    and the notice a redirect asked for."""
    return {
        "section": section,
        "csrf": operator.csrf,
        "notice": NOTICES.get(notice or ""),
        **context,
    }

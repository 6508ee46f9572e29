"""``reviewbot doctor``: every part an installation depends on, checked in turn, each
ending in ok or in what to do about it. Nothing is changed; the model endpoint gets two
tiny requests (a one-word answer and one embedding)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import openai
from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

from app.config import ModelRole, Settings
from app.db import migrate
from app.db.engine import first_line, read_server_info
from app.db.models import EMBEDDING_DIMS
from app.db.queue_health import queue_health
from app.errors import ReviewbotError
from app.github.client import GitHubApp, GitHubError, check_app_credentials
from app.indexing.embedder import HASH_MODEL, EmbeddingUsage, select_embedder
from app.llm.client import describe_model_failure, make_openai_client
from app.review.model import FORMATS

#: Free space under the data directory below which the check fails.
MIN_FREE_BYTES = 2 * 1024**3
#: Deliveries looked at, newest first.
RECENT_DELIVERIES = 30


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def as_json(self) -> dict[str, object]:
        return asdict(self)

    def line(self) -> str:
        said = f"{'ok  ' if self.ok else 'FAIL'} {self.name}: {self.detail}"
        return said + (f" -> {self.fix}" if self.fix and not self.ok else "")


def run_checks(settings: Settings, engine: Engine | None, embedded: bool) -> list[Check]:
    """Every check, in order; one that cannot run says why instead of stopping the rest."""
    checks: list[Callable[[], Check]] = [
        lambda: database(engine),
        lambda: queue(engine, settings),
        lambda: github_app(settings),
        lambda: webhooks(settings),
        lambda: review_model(settings),
        lambda: summary_model(settings),
        lambda: embeddings(settings),
    ]
    if embedded:
        checks.append(lambda: disk(settings.data_dir))
    return [_safely(check) for check in checks]


def _safely(check: Callable[[], Check]) -> Check:
    try:
        return check()
    except ReviewbotError as exc:  # a check that could not even ask
        return Check("check", False, str(exc), "see the message")


def database(engine: Engine | None) -> Check:
    if engine is None:
        return Check("database", False, "not reachable", "set DATABASE_URL, or unset it")
    try:
        with engine.connect() as conn:
            info = read_server_info(conn)
    except DBAPIError as exc:
        return Check("database", False, first_line(exc), "check DATABASE_URL and the server")
    revision, head = migrate.current_revision(engine), migrate.head_revision()
    detail = f"PostgreSQL {info.server_version}, pgvector {info.pgvector_version or 'missing'}"
    detail += f", schema at {revision} (head {head})"
    if info.pgvector_version is None:
        return Check("database", False, detail, "install pgvector (CREATE EXTENSION vector)")
    if revision != head:
        return Check("database", False, detail, "run `reviewbot migrate`")
    return Check("database", True, detail)


def queue(engine: Engine | None, settings: Settings) -> Check:
    if engine is None:
        return Check("job queue", False, "the database is not reachable", "fix the database")
    try:
        with engine.connect() as conn:
            health = queue_health(conn, settings.stalled_worker_seconds)
    except DBAPIError as exc:
        return Check("job queue", False, first_line(exc), "fix the database")
    detail = (
        f"{health.workers_alive} worker(s) alive, oldest runnable job waiting"
        f" {health.oldest_runnable_seconds:.0f} s, {health.stuck_doing} stuck"
    )
    if health.workers_alive == 0:
        return Check(
            "job queue", False, detail, "run `reviewbot worker` (or `serve` with its worker)"
        )
    if health.oldest_runnable_seconds > settings.ready_max_job_age_seconds:
        return Check("job queue", False, detail, "run more workers, or look for a stuck job")
    return Check("job queue", True, detail)


def github_app(settings: Settings) -> Check:
    if not settings.github_app_configured:
        return Check(
            "GitHub App",
            False,
            "not configured",
            "run `reviewbot setup`, or set GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY_PATH",
        )
    check_app_credentials(settings)
    app = GitHubApp(settings)
    try:
        me = app.app_call("GET", "/app").json()
        installations = app.app_call("GET", "/app/installations", params={"per_page": 100})
    except GitHubError as exc:
        fix = "check GITHUB_APP_ID and the key" if exc.status in (401, 403, 404) else ""
        return Check("GitHub App", False, str(exc), fix or "check GITHUB_API_URL and the network")
    count = len(installations.json())
    detail = f"{me.get('slug') or me.get('name')} (id {me.get('id')}), {count} installation(s)"
    if not count:
        return Check("GitHub App", False, detail, "install the App on a repository")
    return Check("GitHub App", True, detail)


def webhooks(settings: Settings) -> Check:
    if settings.github_webhook_secret is None:
        return Check("webhooks", False, "GITHUB_WEBHOOK_SECRET is not set", "set it")
    if not settings.github_app_configured:
        return Check("webhooks", False, "no App to ask", "configure the App first")
    app = GitHubApp(settings)
    try:
        listed = app.app_call(
            "GET", "/app/hook/deliveries", params={"per_page": RECENT_DELIVERIES}
        ).json()
    except GitHubError as exc:
        return Check("webhooks", False, str(exc), "check the App's webhook settings")
    if not listed:
        return Check(
            "webhooks",
            False,
            "GitHub has delivered nothing yet",
            "open a pull request, or check the App's webhook URL",
        )
    failed = [d for d in listed if not 200 <= int(d.get("status_code") or 0) < 300]
    codes = sorted({str(d.get("status_code")) for d in failed})
    detail = f"{len(listed) - len(failed)} of the last {len(listed)} deliveries answered 2xx"
    if failed:
        return Check(
            "webhooks",
            False,
            f"{detail}; others answered {', '.join(codes)}",
            "0 means GitHub could not reach the webhook URL; 401: GITHUB_WEBHOOK_SECRET differs"
            " from the App's; 503: the database was down",
        )
    return Check("webhooks", True, detail)


def review_model(settings: Settings) -> Check:
    if not settings.model_configured("review"):
        return Check(
            "review model", False, "no model endpoint", "set OPENAI_API_KEY or OPENAI_BASE_URL"
        )
    client = make_openai_client(settings, "review").with_options(max_retries=0)
    refused = []
    for name, response_format in FORMATS:
        extra = {"response_format": response_format} if response_format else {}
        create: Any = client.chat.completions.create  # the messages are plain dicts
        try:
            create(
                model=settings.review_model,
                messages=[{"role": "user", "content": 'Answer {"summary": "ok", "comments": []}'}],
                max_tokens=32,
                **extra,
            )
        except openai.APIStatusError as exc:
            if exc.status_code in (400, 422, 500) and name != "text":
                refused.append(name)
                continue
            said = describe_model_failure(client, exc)
            return Check("review model", False, said, _model_fix(exc, "review"))
        except openai.APIConnectionError as exc:
            said = describe_model_failure(client, exc)
            return Check("review model", False, said, _url_fix("review"))
        said = f"{settings.review_model} answers, with response format {name}"
        if refused:
            said += f" (it refused {', '.join(refused)})"
        return Check("review model", True, said)
    return Check("review model", False, "refused every response format", "use another model server")


def summary_model(settings: Settings) -> Check:
    """The summaries' model: one word asked of it (it may be another endpoint)."""
    if not settings.model_configured("summary"):
        return Check("summary model", True, "none: heuristic summaries (set a model for better)")
    client = make_openai_client(settings, "summary").with_options(max_retries=0)
    try:
        client.chat.completions.create(
            model=settings.summary_model,
            messages=[{"role": "user", "content": "Answer: ok"}],
            max_tokens=8,
        )
    except openai.APIStatusError as exc:
        return Check(
            "summary model",
            False,
            describe_model_failure(client, exc),
            _model_fix(exc, "summary"),
        )
    except openai.APIConnectionError as exc:
        return Check(
            "summary model", False, describe_model_failure(client, exc), _url_fix("summary")
        )
    return Check("summary model", True, f"{settings.summary_model} answers")


def _url_fix(role: ModelRole) -> str:
    return f"check REVIEWBOT_{role.upper()}_BASE_URL, or OPENAI_BASE_URL / AZURE_OPENAI_ENDPOINT"


def _model_fix(exc: openai.APIStatusError, role: ModelRole) -> str:
    if exc.status_code in (401, 403):
        return f"check REVIEWBOT_{role.upper()}_API_KEY, or OPENAI_API_KEY / AZURE_OPENAI_API_KEY"
    if exc.status_code == 404:
        return (
            f"check REVIEWBOT_{role.upper()}_MODEL (the model's name on that server; on Azure,"
            " the deployment's name)"
        )
    return "check the model server's log"


def embeddings(settings: Settings) -> Check:
    embedder = select_embedder(settings)
    if embedder.model == HASH_MODEL:
        return Check(
            "embeddings",
            True,
            "the built-in hash embedder (lexical, no model)",
        )
    try:
        [vector] = embedder.embed(["reviewbot doctor"], EmbeddingUsage())
    except ReviewbotError as exc:
        fix = "check REVIEWBOT_EMBEDDING_MODEL, REVIEWBOT_EMBEDDING_DIMENSIONS and the server"
        return Check("embeddings", False, str(exc), fix)
    # narrower vectors are stored zero-padded: the model's own width ends at the last value
    width = max((i + 1 for i, v in enumerate(vector) if v != 0.0), default=0)
    detail = f"{embedder.model} answers {width} dimensions (the column holds {EMBEDDING_DIMS})"
    return Check("embeddings", True, detail)


def disk(data_dir: Path) -> Check:
    usage = shutil.disk_usage(data_dir if data_dir.exists() else data_dir.parent)
    detail = f"{usage.free / 1024**3:.1f} GiB free under {data_dir}"
    if usage.free < MIN_FREE_BYTES:
        return Check("disk", False, detail, "free some space, or set REVIEWBOT_DATA_DIR elsewhere")
    return Check("disk", True, detail)


def checks_json(checks: list[Check]) -> dict[str, object]:
    return {"checks": [c.as_json() for c in checks]}

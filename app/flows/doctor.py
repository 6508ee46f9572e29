"""``reviewbot doctor``: every part an installation depends on, checked in turn, each
ending in ok or in what to do about it. Nothing is changed; the model endpoint gets two
tiny requests (a one-word answer and one embedding)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import openai
from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

from app.checks import Check
from app.config import ModelRole, Settings
from app.db import migrate
from app.db.engine import first_line, read_server_info
from app.db.models import EMBEDDING_DIMS
from app.db.queue_health import queue_health
from app.errors import ReviewbotError
from app.indexing.embedder import HASH_MODEL, EmbeddingUsage, select_embedder
from app.llm.client import describe_model_failure, make_openai_client
from app.review.model import FORMATS
from app.tools.catalog import TOOLS
from app.tools.versions import tool_versions
from app.wording import counted

#: Free space under the data directory below which the check fails.
MIN_FREE_BYTES = 2 * 1024**3


def run_checks(
    settings: Settings,
    engine: Engine | None,
    embedded: bool,
    host: Sequence[Callable[[], Check]] = (),
    *,
    server: bool = True,
) -> list[Check]:
    """Every check, in order (``host``: the code host's, such as the GitHub App's and its
    webhooks'); one that cannot run says why instead of stopping the rest. ``server``
    False checks what the CLI needs only: no job queue, no code host, and no review
    model is no failure (the CLI prints the prompt instead)."""
    for_server: list[Callable[[], Check]] = [lambda: queue(engine, settings), *host]
    for_both: list[Callable[[], Check]] = [
        lambda: review_model(settings, required=server),
        lambda: summary_model(settings),
        lambda: embeddings(settings),
        git,
        tools,
    ]
    if embedded:
        for_both.append(lambda: disk(settings.data_dir))
    return [
        _safely(lambda: database(engine, embedded)),
        *(replace(_safely(check), server_only=True) for check in (for_server if server else [])),
        *(_safely(check) for check in for_both),
    ]


def tools(versions: Mapping[str, str | None] | None = None) -> Check:
    """The linters and the secret scanner of the tools stage, with their versions
    (``versions``: as ``tool_versions`` finds them)."""
    versions = tool_versions() if versions is None else versions
    optional = {t.name for t in TOOLS if t.optional}
    missing = [n for n, version in versions.items() if version is None and n not in optional]
    listed = ", ".join(f"{n} {v}" for n, v in versions.items() if v is not None)
    absent = [n for n in optional if versions.get(n) is None]
    if absent:
        listed += f"; {', '.join(absent)} (optional) not installed"
    if missing:
        return Check(
            "tools",
            False,
            f"{', '.join(missing)} not installed or not answering ({listed or 'none found'})",
            "reinstall reviewbot: the tools are its dependencies (reviews go on without them)",
        )
    return Check("tools", True, listed)


def _safely(check: Callable[[], Check]) -> Check:
    try:
        return check()
    except ReviewbotError as exc:  # a check that could not even ask
        return Check("check", False, str(exc), "see the message")


def database(engine: Engine | None, embedded: bool = False) -> Check:
    """Reachable, with pgvector, at the newest migration. An embedded database not made
    yet is fine: every command that uses it migrates it first."""
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
    if revision is None and embedded:
        return Check("database", True, detail + "; the first command migrates it")
    if revision != head:
        return Check("database", False, detail, "run `reviewbot migrate`")
    return Check("database", True, detail)


def queue(engine: Engine | None, settings: Settings) -> Check:
    if engine is None:
        return Check("job queue", False, "the database is not reachable", "fix the database")
    try:
        with engine.connect() as conn:
            health = queue_health(conn, settings.worker_alive_seconds)
    except DBAPIError as exc:
        return Check("job queue", False, first_line(exc), "fix the database")
    detail = (
        f"{counted(health.workers_alive, 'worker')} alive, oldest runnable job waiting"
        f" {health.oldest_runnable_seconds:.0f} s, {health.stuck_doing} stuck"
    )
    if health.workers_alive == 0:
        return Check(
            "job queue", False, detail, "run `reviewbot worker` (or `serve` with its worker)"
        )
    if health.oldest_runnable_seconds > settings.ready_max_job_age_seconds:
        return Check("job queue", False, detail, "run more workers, or look for a stuck job")
    return Check("job queue", True, detail)


def review_model(settings: Settings, required: bool = True) -> Check:
    """``required`` False (the CLI): no endpoint is fine, the prompt is printed instead."""
    if not settings.model_configured("review"):
        if not required:
            return Check("review model", True, "none: `reviewbot review` prints the prompt instead")
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
    detail = (
        f"{embedder.model} answers {len(vector)} dimensions, stored at that width"
        f" (at most {EMBEDDING_DIMS})"
    )
    return Check("embeddings", True, detail)


def git() -> Check:
    """git on PATH: local reviews read the repository with it, and the App fetches the
    history of the co-change signal with it."""
    found = shutil.which("git")
    if found is None:
        return Check(
            "git",
            False,
            "git is not installed",
            "install git (apt-get install git): reviews and the co-change history need it",
        )
    try:
        version = subprocess.run(
            [found, "--version"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return Check("git", False, f"{found} does not run: {type(exc).__name__}", "reinstall git")
    return Check("git", True, version)


def disk(data_dir: Path) -> Check:
    usage = shutil.disk_usage(data_dir if data_dir.exists() else data_dir.parent)
    detail = f"{usage.free / 1024**3:.1f} GiB free under {data_dir}"
    if usage.free < MIN_FREE_BYTES:
        return Check("disk", False, detail, "free some space, or set REVIEWBOT_DATA_DIR elsewhere")
    return Check("disk", True, detail)


def checks_json(checks: list[Check]) -> dict[str, object]:
    return {"checks": [c.as_json() for c in checks]}

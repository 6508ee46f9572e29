"""Reviewable before the summaries are done: an index run without model calls, retrieval
without the vector signal until the background job has made the summaries and vectors
(and the review says so), and that job: resumable, one at a time, counted."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, text

from app.config import Settings
from app.diff.changed import changed_functions
from app.diff.parse import parse_diff
from app.flows.enrich import enrich_repository
from app.indexing.embedder import select_embedder
from app.indexing.stale import is_pending
from app.retrieval.retrieve import ContextResult, retrieve_context
from app.review.context_blocks import render_context_block
from app.runtime import Runtime
from tests.fakes.openai_server import CHAT, EMBEDDINGS, FakeOpenAI
from tests.support.indexing import index_tree

REPO = "acme/shop"
OLD_CART = (
    "from pkg.money import to_cents\n\n\ndef cart_total(items):\n"
    "    return sum(to_cents(i.price) for i in items)\n"
)
NEW_CART = OLD_CART.replace("return sum(", "return max(0, sum(").rstrip("\n") + ")\n"
DIFF = (
    "diff --git a/pkg/cart.py b/pkg/cart.py\n--- a/pkg/cart.py\n+++ b/pkg/cart.py\n"
    "@@ -4,2 +4,2 @@\n def cart_total(items):\n"
    "-    return sum(to_cents(i.price) for i in items)\n"
    "+    return max(0, sum(to_cents(i.price) for i in items))\n"
)


def _tree(root: Path, modules: int = 12) -> Path:
    files = {
        "pkg/money.py": "def to_cents(amount):\n    return round(amount * 100)\n",
        "pkg/cart.py": OLD_CART,
    }
    for i in range(modules):
        files[f"pkg/tax_{i}.py"] = (
            f"def tax_{i}(amount):\n    return amount * 0.{i + 1}\n\n\n"
            f"def refund_{i}(amount):\n    return -tax_{i}(amount)\n"
        )
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content)
    return root


def _kinds(engine: Engine) -> tuple[set[str], int, bool]:
    """(the rows' summarizers, rows without a vector, the repository's pending flag)."""
    with engine.connect() as conn:
        kinds = set(conn.execute(text("SELECT DISTINCT summarizer FROM code_chunks")).scalars())
        missing = conn.execute(
            text("SELECT count(*) FROM code_chunks WHERE embedding IS NULL")
        ).scalar_one()
        pending = conn.execute(text("SELECT enrich_pending FROM repositories")).scalar_one()
    return kinds, missing, pending


def _context(engine: Engine, settings: Settings) -> ContextResult:
    diffs = parse_diff(DIFF.encode())
    sides = {"old": OLD_CART.encode(), "new": NEW_CART.encode()}
    changed = changed_functions(diffs, lambda path, side: sides[side])
    embedder = select_embedder(settings)
    return retrieve_context(
        engine, REPO, diffs, changed, embedder, settings, render=render_context_block, budget=4000
    )


def test_indexed_without_models_it_is_reviewable_and_the_vectors_follow(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    report = index_tree(
        engine, repo=REPO, settings=llm_settings, root=_tree(tmp_path), enrich=False
    )
    assert fake_openai.requests == []  # not one model call before it is reviewable
    assert report.summaries_deferred == report.embeddings_deferred == report.chunks_added > 20
    assert _kinds(engine) == ({"heuristic"}, report.chunks_added, True)

    before = _context(engine, llm_settings)
    assert fake_openai.calls(EMBEDDINGS) == 0  # no query vector for a search not made
    assert before.notes == [
        "Semantic search was left out: this repository's summaries and embeddings are still"
        f" being made (0 of {report.chunks_added} chunks done); related code was found by"
        " links, history, siblings and full-text search."
    ]
    found = {c.symbol_name: c for c in before.context}
    assert found["to_cents"].evidence.callee > 0  # the links need no model
    assert all(c.evidence.vector == 0 for c in before.context)

    outcome = enrich_repository(Runtime(llm_settings, engine), REPO)
    assert outcome.finished and outcome.updated == outcome.total == report.chunks_added
    assert _kinds(engine) == ({"llm"}, 0, False)
    with engine.connect() as conn:
        used = dict(conn.execute(text("SELECT purpose, calls FROM model_usage")).all())
    assert used == {"summary": fake_openai.calls(CHAT), "embedding": fake_openai.calls(EMBEDDINGS)}

    after = _context(engine, llm_settings)
    assert after.notes == []
    assert any(c.evidence.vector > 0 for c in after.context)

    again = enrich_repository(Runtime(llm_settings, engine), REPO)  # nothing left: no calls
    assert (again.updated, again.finished) == (0, True)
    assert fake_openai.calls(CHAT) == used["summary"]


def test_a_job_stopped_by_its_model_time_keeps_its_work_and_the_next_one_finishes(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    report = index_tree(
        engine, repo=REPO, settings=llm_settings, root=_tree(tmp_path), enrich=False
    )
    fake_openai.generation_seconds = 0.05
    slow = llm_settings.model_copy(
        update={"summary_batch_size": 1, "summary_concurrency": 1, "llm_job_budget_seconds": 0.4}
    )
    first = enrich_repository(Runtime(slow, engine), REPO)
    assert first.stopped is not None and "time budget" in first.stopped
    assert 0 < first.done < first.total == report.chunks_added
    assert _kinds(engine)[2] is True  # still pending: retrieval still leaves vectors out
    summarised = fake_openai.calls(CHAT)

    fake_openai.generation_seconds = 0.0
    second = enrich_repository(Runtime(llm_settings, engine), REPO)
    assert second.finished and _kinds(engine) == ({"llm"}, 0, False)
    # only what the first job did not summarise was asked for again
    asked = sum(
        body["messages"][-1]["content"].count("### chunk ")
        for body in fake_openai.bodies(CHAT)[summarised:]
    )
    assert asked == report.chunks_added - first.done


def test_one_enrichment_of_a_repository_at_a_time(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    index_tree(engine, repo=REPO, settings=llm_settings, root=_tree(tmp_path), enrich=False)
    with engine.connect() as holder:
        holder.execute(text("SELECT pg_advisory_lock(hashtext('reviewbot:enrich:acme/shop'))"))
        outcome = enrich_repository(Runtime(llm_settings, engine), REPO)
        holder.execute(text("SELECT pg_advisory_unlock_all()"))
    assert outcome.busy and outcome.updated == 0
    assert fake_openai.requests == []


def test_a_small_repository_is_enriched_in_the_index_run_itself(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    report = index_tree(
        engine,
        repo=REPO,
        settings=llm_settings,
        root=_tree(tmp_path, modules=2),
        enrich=False,
        inline_enrich_max=200,
    )
    assert report.summaries_deferred == report.embeddings_deferred == 0
    assert report.summary_usage.calls == fake_openai.calls(CHAT) > 0
    assert _kinds(engine) == ({"llm"}, 0, False)

    # over the limit: left to the job, and the repository is pending
    more = index_tree(
        engine,
        repo=REPO,
        settings=llm_settings,
        root=_tree(tmp_path, modules=40),
        enrich=False,
        inline_enrich_max=20,
    )
    assert more.summaries_deferred == more.chunks_added > 20
    assert _kinds(engine)[2] is True


def test_a_repository_is_pending_while_more_than_one_percent_waits() -> None:
    assert is_pending(0, 100_000)
    assert is_pending(98_999, 100_000)
    assert not is_pending(99_000, 100_000)  # a push's few rows do not turn vectors off
    assert not is_pending(0, 0)

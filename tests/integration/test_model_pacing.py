"""Summaries against a server like llama.cpp's on one slot: one request at a time, slow
generation that goes on after the client gives up. The job's calls end within its time
budget, concurrency backs off, and nothing is retried in parallel (issue 16)."""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import SecretStr
from sqlalchemy import Engine

from app.config import Settings
from app.indexing.embedder import select_embedder
from app.indexing.files import chunk_file
from app.indexing.summarizer import HEURISTIC, LLM, LLMSummarizer, select_summarizer
from tests.fakes.openai_server import CHAT, FakeOpenAI
from tests.support.indexing import index_tree

SOURCE = "".join(f"def step_{i}(x):\n    return x + {i}\n\n\n" for i in range(48))


def _settings(fake: FakeOpenAI, timeout: float, budget: float, **more: object) -> Settings:
    """A model endpoint on the fake, with this timeout and job budget."""
    return Settings(
        openai_base_url=fake.base_url,
        openai_api_key=SecretStr("sk-test-0123456789abcdef"),
        llm_timeout_seconds=timeout,
        llm_job_budget_seconds=budget,
        **more,  # type: ignore[arg-type]
    )


def _summarizer(fake: FakeOpenAI, timeout: float, budget: float) -> LLMSummarizer:
    settings = _settings(
        fake, timeout, budget, llm_max_retries=2, summary_concurrency=4, summary_batch_size=8
    )
    summarizer = select_summarizer(settings)
    assert summarizer is not None
    return summarizer


def _drained(fake: FakeOpenAI) -> int:
    """Chat requests the server received, once it has finished them all."""
    deadline = time.monotonic() + 30
    while fake.in_flight and time.monotonic() < deadline:
        time.sleep(0.05)
    return sum(1 for r in fake.requests if r.path == CHAT)


def test_a_server_slower_than_the_timeout_costs_the_budget_not_a_retry_storm(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.one_at_a_time, fake_openai.generation_seconds = True, 1.0
    chunks = list(chunk_file("pkg/steps.py", SOURCE.encode()).chunks)
    summarizer = _summarizer(fake_openai, timeout=0.4, budget=3.0)
    started = time.monotonic()
    summaries, usage = summarizer.summarize(chunks)
    elapsed = time.monotonic() - started
    assert elapsed < 3.0 + 1.0  # within the budget, plus one backoff's slack
    assert [s.summarizer for s in summaries] == [HEURISTIC] * len(chunks)  # nothing lost
    assert usage.last_error in {
        "the model endpoint did not answer within 0.4 s (3 attempts)",
        "the job's model time budget (3 s) ran out",
    }
    # 6 batches x 3 attempts would be 18 requests, 4 at a time. After the first timeouts
    # the limit is 1: one attempt at a time until the budget ends, so at most the first 4
    # plus budget / timeout more
    sent = _drained(fake_openai)
    assert sent <= 4 + 3.0 / 0.4, sent


def test_the_budget_ends_a_job_that_a_slow_server_would_drag_on(
    fake_openai: FakeOpenAI,
) -> None:
    """Each answer comes in time, but all of them would take 6 x 0.6 s: the budget of
    1.5 s ends the job, and the rest of the chunks get heuristic summaries."""
    fake_openai.one_at_a_time, fake_openai.generation_seconds = True, 0.6
    chunks = list(chunk_file("pkg/steps.py", SOURCE.encode()).chunks)
    summarizer = _summarizer(fake_openai, timeout=5.0, budget=1.5)
    started = time.monotonic()
    summaries, usage = summarizer.summarize(chunks)
    assert time.monotonic() - started < 1.5 + 1.0
    kinds = {s.summarizer for s in summaries}
    assert kinds == {LLM, HEURISTIC}  # what was answered in time is kept
    assert "model time budget (1.5 s) ran out" in (usage.last_error or "")


def test_the_budget_spans_the_whole_job_not_each_batch_of_files(
    fake_openai: FakeOpenAI,
) -> None:
    """The indexer summarises batch after batch of files; the budget is the job's."""
    fake_openai.one_at_a_time, fake_openai.generation_seconds = True, 0.6
    chunks = list(chunk_file("pkg/steps.py", SOURCE.encode()).chunks)
    summarizer = _summarizer(fake_openai, timeout=5.0, budget=1.5)
    summarizer.summarize(chunks[:24])  # the first batch of files spends the budget
    started = time.monotonic()
    later, _ = summarizer.summarize(chunks[24:])
    assert time.monotonic() - started < 0.5
    assert {s.summarizer for s in later} == {HEURISTIC}


def test_embeddings_end_within_the_budget_and_keep_what_was_made(
    fake_openai: FakeOpenAI, engine: Engine, tmp_path: Path
) -> None:
    """12 requests of 0.5 s on one slot would take 6 s: the 1.2 s budget stops them, the
    vectors made in time are stored, and the rest of the rows wait for the next run."""
    fake_openai.one_at_a_time, fake_openai.embedding_seconds = True, 0.5
    settings = _settings(fake_openai, 5.0, 1.2, embedding_batch_size=4)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "steps.py").write_text(SOURCE)
    started = time.monotonic()
    report = index_tree(
        engine, tmp_path, "steps", embedder=select_embedder(settings), embed_slice=4
    )
    assert time.monotonic() - started < 1.2 + 1.5
    assert 0 < report.embeddings_computed < report.chunks_added
    assert report.embeddings_missing == report.chunks_added - report.embeddings_computed
    assert any("model time budget (1.2 s) ran out" in e for e in report.errors), report.errors


def test_a_single_slot_server_that_keeps_up_summarizes_everything(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.one_at_a_time, fake_openai.generation_seconds = True, 0.05
    chunks = list(chunk_file("pkg/steps.py", SOURCE.encode()).chunks)
    summaries, usage = _summarizer(fake_openai, timeout=5.0, budget=60.0).summarize(chunks)
    assert [s.summarizer for s in summaries] == [LLM] * len(chunks)
    assert usage.calls == 6 and usage.failed_batches == 0

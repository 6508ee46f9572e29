"""Retrieval and review on a real git history, with the real database and a fake LLM."""

from __future__ import annotations

import itertools
import json
import shutil
import time
from pathlib import Path

import openai
import pytest
from sqlalchemy import Engine
from sqlalchemy.engine import URL
from typer.testing import CliRunner

from app.cli import cli
from app.config import Settings
from app.errors import ConfigError
from app.git import GitError, LocalRepo
from app.indexing.embedder import select_embedder
from app.indexing.summarizer import select_summarizer
from app.llm.client import make_openai_client
from app.review.local import LocalReview, review_local
from app.review.model import ACCEPTED_FORMATS, ReviewFormatError, ReviewModelError
from app.review.pipeline import run_review, summary_markdown
from tests.fakes.openai_server import CHAT, FakeOpenAI
from tests.gitrepo import GitRepo
from tests.shop_repo import make_history, review_reply

SAMPLES = Path(__file__).parents[1] / "unit" / "chunker_samples"


@pytest.fixture
def history(tmp_path: Path) -> tuple[GitRepo, str]:
    return make_history(tmp_path / "shop")


def test_callee_in_another_file_is_retrieved_and_in_the_prompt(
    engine: Engine, settings: Settings, history: tuple[GitRepo, str]
) -> None:
    repo, base = history
    local = review_local(
        engine,
        repo.root,
        settings,
        embedder=select_embedder(settings),
        summarizer=None,
        base=base,
        head="HEAD",
    )
    prepared = local.prepared
    changed = [c.as_json() for c in prepared.context.changed]
    assert changed == [
        {
            "file_path": "shop/checkout.py",
            "symbol_name": "checkout_total",
            "start_line": 4,
            "end_line": 8,
        }
    ]
    context = {(c.file_path, c.symbol_name): c for c in prepared.context.context}
    assert ("shop/pricing.py", "apply_discount") in context
    callee = context[("shop/pricing.py", "apply_discount")]
    assert "structural" in callee.signals
    assert prepared.context.context[0] == callee  # the best context is the callee
    assert "def apply_discount(price: float, percent: float) -> float:" in prepared.prompt.user
    assert ("shop/checkout.py", "checkout_total") not in context  # not the changed code itself
    assert prepared.context.tokens_used <= prepared.context.budget == 6000
    assert "Title: Apply coupons at checkout" in prepared.prompt.user


def prepare_with_model(
    engine: Engine, settings: Settings, fake: FakeOpenAI, history: tuple[GitRepo, str]
) -> tuple[LocalReview, openai.OpenAI]:
    fake.chat_reply = review_reply
    repo, base = history
    client = make_openai_client(settings, "review")
    local = review_local(
        engine,
        repo.root,
        settings,
        embedder=select_embedder(settings),
        summarizer=select_summarizer(settings),
        base=base,
        head="HEAD",
    )
    return local, client


def test_review_with_model_keeps_valid_comments(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, history: tuple[GitRepo, str]
) -> None:
    local, client = prepare_with_model(engine, llm_settings, fake_openai, history)
    result = run_review(client, local.prepared, llm_settings)

    [comment] = result.comments
    assert (comment.path, comment.line, comment.severity) == ("shop/checkout.py", 7, "major")
    assert result.moved_to_summary == [
        "shop/pricing.py:5 Not in the diff: This file did not change."
    ]
    review_request = fake_openai.bodies(CHAT)[-1]
    assert review_request["response_format"]["type"] == "json_schema"
    assert review_request["model"] == llm_settings.review_model
    body = summary_markdown(result, local.prepared)
    assert body.startswith("Applies coupon discounts at checkout.")
    assert "shop/pricing.py:4-6" in body  # the context used, by path


def test_endpoint_without_json_schema_falls_back(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, history: tuple[GitRepo, str]
) -> None:
    local, client = prepare_with_model(engine, llm_settings, fake_openai, history)
    fake_openai.fail_next(CHAT, [400])  # "response_format json_schema not supported"
    result = run_review(client, local.prepared, llm_settings)
    formats = [b.get("response_format", {}).get("type") for b in fake_openai.bodies(CHAT)]
    assert formats[-1] == "json_object"
    assert len(result.comments) == 1


runner = CliRunner()


def test_cli_context_json_contract(
    cli_env: URL, history: tuple[GitRepo, str], tmp_path: Path
) -> None:
    repo, base = history
    base_tree = tmp_path / "base"
    shutil.copytree(repo.root, base_tree)
    assert runner.invoke(cli, ["index", str(base_tree), "--repo", "shop"]).exit_code == 0
    (tmp_path / "change.diff").write_bytes(repo.diff(base, "HEAD"))
    result = runner.invoke(
        cli,
        [
            "context",
            "--repo",
            "shop",
            "--diff",
            str(tmp_path / "change.diff"),
            "--root",
            str(repo.root),
            "--base",
            base,
            "--budget",
            "800",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {
        "changed",
        "skipped",
        "notes",
        "context",
        "tokens_used",
        "budget",
        "token_counter",
        "timings",
    }
    assert data["skipped"] == [] and data["notes"] == []
    timings = data["timings"]
    assert set(timings) == {"embedding_s", "database_s", "total_s"}
    assert timings["total_s"] >= timings["embedding_s"] + timings["database_s"] > 0
    assert data["budget"] == 800 and data["tokens_used"] <= 800
    assert data["token_counter"] in {"tiktoken:o200k_base", "quicktok:o200k_base"}
    assert set(data["context"][0]) == {
        "file_path",
        "start_line",
        "end_line",
        "symbol_name",
        "chunk_type",
        "score",
        "relevance",
        "tokens",
        "signals",
        "why",
        "excerpt",
        "item",
    }
    items = [c["item"] for c in data["context"]]  # an entry per stretch of lines shown
    assert items[0] == 0 and all(b - a in (0, 1) for a, b in itertools.pairwise(items))
    assert all(0 < c["relevance"] < 1 for c in data["context"])
    assert data["context"][0]["excerpt"] is False  # what the change calls is shown whole
    assert data["context"][0]["symbol_name"] == "apply_discount"
    assert data["context"][0]["why"][0] == "called by the change"


def test_cli_review_dry_run_json(
    cli_env: URL, history: tuple[GitRepo, str], tmp_path: Path
) -> None:
    repo, base = history
    result = runner.invoke(
        cli,
        [
            "review",
            "--repo",
            str(repo.root),
            "--base",
            base,
            "--head",
            "HEAD",
            "--dry-run",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["dry_run"] is True
    assert data["prompt_tokens"] > data["diff_tokens"] > 0
    assert "apply_discount" in data["prompt"]["user"]


def test_mistyped_base_is_an_error_naming_the_revision(
    cli_env: URL, history: tuple[GitRepo, str]
) -> None:
    repo, _ = history
    result = runner.invoke(cli, ["review", "--repo", str(repo.root), "--base", "mian", "--json"])
    assert result.exit_code != 0
    assert isinstance(result.exception, GitError)
    assert "unknown revision 'mian'" in str(result.exception)
    git = LocalRepo(repo.root)
    with pytest.raises(GitError, match="unknown revision 'nope'"):
        git.read("nope", "shop/pricing.py")
    assert git.read("HEAD", "shop/missing.py") is None  # a valid revision without the file
    assert git.read("HEAD", "shop") is None  # a folder is not a file
    with pytest.raises(GitError, match="outside the repository"):
        git.read(None, "../../../../etc/passwd")


def test_prompt_preview_prints_the_whole_prompt_uncropped(
    cli_env: URL, history: tuple[GitRepo, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, base = history
    args = ["review", "--repo", str(repo.root), "--base", base, "--head", "HEAD"]
    exact = json.loads(runner.invoke(cli, [*args, "--json"]).stdout)["prompt"]
    monkeypatch.setenv("COLUMNS", "40")  # a narrow terminal
    shown = runner.invoke(cli, args)
    assert shown.exit_code == 0, shown.output
    lines = (exact["system"] + "\n" + exact["user"]).splitlines()
    assert max(len(line) for line in lines) > 100  # long lines exist, so cropping would show
    missing = [line for line in lines if line not in shown.stdout]
    assert missing == []
    assert "===== user prompt =====" in shown.stdout


def _context(args: list[str]) -> dict[str, object]:
    """``context --json`` without its timings (which differ from run to run)."""
    result = runner.invoke(cli, ["context", *args, "--budget", "800", "--json"])
    assert result.exit_code == 0, result.output
    data = dict(json.loads(result.stdout))
    data.pop("timings")
    return data


def test_cli_context_needs_no_work_tree(
    cli_env: URL,
    history: tuple[GitRepo, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo, base = history
    indexed = tmp_path / "indexed"
    shutil.copytree(repo.root, indexed)
    GitRepo(indexed).git("checkout", "-q", base)  # the tree indexed is the diff's old side
    assert runner.invoke(cli, ["index", str(indexed), "--repo", "shop"]).exit_code == 0
    change = tmp_path / "change.diff"
    change.write_bytes(repo.diff(base, "HEAD"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no work tree here
    without = _context(["--repo", "shop", "--diff", str(change)])
    with_tree = _context(
        ["--repo", "shop", "--diff", str(change), "--root", str(repo.root), "--base", base]
    )
    assert without == with_tree
    assert without["changed"] and without["context"]
    table = runner.invoke(cli, ["context", "--repo", "shop", "--diff", str(change)])
    assert table.exit_code == 0, table.output
    first = without["context"][0]
    assert "relevance" in table.output and f"{first['relevance']:.1%}" in table.output

    (indexed / "shop" / "checkout.py").write_text("# edited after indexing\n")
    stale = runner.invoke(cli, ["context", "--repo", "shop", "--diff", str(change)])
    assert isinstance(stale.exception, ConfigError)
    assert "shop/checkout.py has changed since 'shop' was indexed" in str(stale.exception)


def test_llama_cpp_like_server_reviews_through_its_quirks(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, history: tuple[GitRepo, str]
) -> None:
    fake_openai.llama_like = True  # 500 on json_schema, one embedding per token
    local, client = prepare_with_model(engine, llm_settings, fake_openai, history)
    assert local.index.embeddings_computed > 0 and local.index.errors == []
    first = run_review(client, local.prepared, llm_settings)
    second = run_review(client, local.prepared, llm_settings)
    reviews = [
        b
        for b in fake_openai.bodies(CHAT, ok_only=False)
        if "### chunk" not in b["messages"][-1]["content"]
    ]
    formats = [(b.get("response_format") or {}).get("type") for b in reviews]
    assert formats == ["json_schema", "json_object", "json_object"]  # probed once, remembered
    # JSON mode held to the review's schema (llama-cpp-python turns it into a grammar)
    assert reviews[1]["response_format"]["schema"]["required"] == [
        "summary",
        "walkthrough",
        "comments",
        "tool_findings",
    ]
    assert all(b["max_tokens"] == llm_settings.review_max_tokens for b in reviews)
    assert all(b.get("max_tokens") for b in fake_openai.bodies(CHAT))  # summaries too
    assert len(first.comments) == len(second.comments) == 1
    fake_openai.llama_like = False  # the server is replaced: the remembered format is refused
    fake_openai.fail_next(CHAT, [400])
    third = run_review(client, local.prepared, llm_settings)
    last = fake_openai.bodies(CHAT)[-1]
    assert last["response_format"]["type"] == "json_schema" and len(third.comments) == 1


def test_a_single_slot_server_slower_than_the_timeout_fails_the_review_cleanly(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, history: tuple[GitRepo, str]
) -> None:
    """Like llama.cpp on one slot with a model too slow for the timeout: the review ends
    within timeout x attempts (plus backoff) with a message that says so, not a hang."""
    local, client = prepare_with_model(engine, llm_settings, fake_openai, history)
    fake_openai.one_at_a_time, fake_openai.generation_seconds = True, 2.0
    slow = client.with_options(timeout=0.5, max_retries=1)
    started = time.monotonic()
    with pytest.raises(ReviewModelError, match=r"did not answer within 0.5 s \(2 attempts\)"):
        run_review(slow, local.prepared, llm_settings)
    assert time.monotonic() - started < 2 * 0.5 + 3  # two attempts and one backoff


@pytest.mark.parametrize("format_known", [True, False], ids=["format-known", "probing"])
def test_a_review_ends_within_the_jobs_budget_whatever_the_timeout_and_retries(
    engine: Engine,
    llm_settings: Settings,
    fake_openai: FakeOpenAI,
    history: tuple[GitRepo, str],
    format_known: bool,
) -> None:
    """timeout x attempts would be 5 x 30 s here; the job's 2 s budget cuts the first
    attempt to 2 s and leaves no time for another, so the review fails in about 2 s,
    whether the endpoint's format is known (a retried call) or still probed."""
    local, client = prepare_with_model(engine, llm_settings, fake_openai, history)
    patient = client.with_options(timeout=30, max_retries=4)
    if format_known:
        run_review(patient, local.prepared, llm_settings)
    else:
        ACCEPTED_FORMATS.clear()
    fake_openai.one_at_a_time, fake_openai.generation_seconds = True, 4.0
    budgeted = llm_settings.model_copy(update={"llm_job_budget_seconds": 2.0})
    started = time.monotonic()
    with pytest.raises(ReviewModelError, match=r"did not answer within 2 s \(1 attempt\)"):
        run_review(patient, local.prepared, budgeted)
    assert time.monotonic() - started < 2 + 1.5
    assert fake_openai.peak_in_flight == 1  # no retry queued behind the abandoned request


def test_a_prompt_longer_than_the_models_context_fails_once_and_names_the_budgets(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, history: tuple[GitRepo, str]
) -> None:
    """llama.cpp answers 400 context_length_exceeded: that is not a refused format (no
    probing of the other formats) nor worth retrying (one request)."""
    local, client = prepare_with_model(engine, llm_settings, fake_openai, history)
    ACCEPTED_FORMATS.clear()
    fake_openai.context_window = 1000
    before = len(fake_openai.bodies(CHAT, ok_only=False))
    with pytest.raises(ReviewModelError, match="longer than the model's context") as failed:
        run_review(client, local.prepared, llm_settings)
    assert "REVIEWBOT_DIFF_TOKEN_BUDGET" in str(failed.value)
    assert len(fake_openai.bodies(CHAT, ok_only=False)) == before + 1


def test_a_wrong_shape_and_no_time_left_to_ask_again_is_a_format_failure(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, history: tuple[GitRepo, str]
) -> None:
    """The first answer (1.2 s) ignores the format; the repair would need 1.2 s more than
    the 2 s budget leaves: the result says the model did not follow the format."""
    local, client = prepare_with_model(engine, llm_settings, fake_openai, history)
    fake_openai.chat_reply = lambda body: '{"title": "Fix", "status": "ok"}'
    fake_openai.generation_seconds = 1.2
    budgeted = llm_settings.model_copy(update={"llm_job_budget_seconds": 2.0})
    started = time.monotonic()
    with pytest.raises(ReviewFormatError, match=r"did not follow the review format, and the"):
        run_review(client, local.prepared, budgeted)
    assert time.monotonic() - started < 2 + 1


def test_without_a_model_the_tools_findings_are_still_printed(
    cli_env: URL, history: tuple[GitRepo, str]
) -> None:
    repo, _ = history
    base = repo.git("rev-parse", "HEAD").decode().strip()
    repo.write("deploy.sh", "#!/bin/sh\nname=$1\nrm -rf $name/tmp\n")
    repo.commit("Add the deployment script")
    args = ["review", "--repo", str(repo.root), "--base", base, "--head", "HEAD"]
    shown = runner.invoke(cli, args)
    assert shown.exit_code == 0, shown.output
    assert "===== tool findings on the changed lines =====" in shown.stdout
    assert "deploy.sh:3 minor shellcheck SC2086: Double quote" in shown.stdout
    data = json.loads(runner.invoke(cli, [*args, "--json"]).stdout)
    [finding] = [f for f in data["tools"]["findings"] if f["tool"] == "shellcheck"]
    assert (finding["line"], finding["fix"]) == (3, 'rm -rf "$name"/tmp')
    assert "T1 deploy.sh:3 [shellcheck SC2086, minor]" in data["prompt"]["user"]

"""`reviewbot index` and `reviewbot search` on a real repository: this one's own code."""

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy.engine import URL
from typer.testing import CliRunner

from app.cli import cli

APP = Path(__file__).parents[2] / "app"
runner = CliRunner()


@pytest.fixture
def work_tree(tmp_path: Path, cli_env: URL) -> Path:
    root = tmp_path / "reviewbot-src"
    shutil.copytree(APP, root / "app", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_index_json_contract_then_incremental(work_tree: Path) -> None:
    first = runner.invoke(cli, ["index", str(work_tree), "--json"])
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    assert set(report) == {
        "repo",
        "root",
        "full",
        "estimate",
        "commit",
        "files",
        "chunks",
        "summaries",
        "embeddings",
        "history",
        "errors",
        "ivfflat_lists",
        "wall_seconds",
        "timings",
    }
    assert report["repo"] == "reviewbot-src"
    assert report["history"] is None  # not a git repository
    assert report["files"]["changed"] == report["files"]["seen"] > 20
    assert report["chunks"]["added"] == report["chunks"]["total"] > 200
    assert report["embeddings"]["model"] == "hash-v1"
    assert report["summaries"]["calls"] == 0

    again = json.loads(runner.invoke(cli, ["index", str(work_tree), "--json"]).stdout)
    assert again["files"]["changed"] == 0
    assert again["chunks"] == {**report["chunks"], "added": 0, "reused": 0}


def test_search_finds_a_function_from_a_paraphrase(work_tree: Path) -> None:
    assert runner.invoke(cli, ["index", str(work_tree), "--repo", "rb"]).exit_code == 0
    result = runner.invoke(
        cli,
        [
            "search",
            "--repo",
            "rb",
            "-k",
            "3",
            "--json",
            "scrub the password out of a driver error and give a one-line reason",
        ],
    )
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert hits[0]["qualified_name"] == "describe_connect_error"
    assert hits[0]["file_path"] == "app/db/engine.py"
    assert set(hits[0]) == {
        "chunk_id",
        "file_path",
        "start_line",
        "end_line",
        "symbol_name",
        "qualified_name",
        "chunk_type",
        "score",
        "summary",
    }


def test_search_ranks_as_ask_does_code_before_tests(work_tree: Path) -> None:
    """The same function in a test file (its path first in order, its code and vector
    the same) comes after all the code, as ``/ask`` ranks: search is the question's
    ranking. This repository's code fills the 200 places before any test."""
    copy = work_tree / "a" / "tests" / "test_engine.py"
    copy.parent.mkdir(parents=True)
    shutil.copy(work_tree / "app" / "db" / "engine.py", copy)
    assert runner.invoke(cli, ["index", str(work_tree), "--repo", "rb"]).exit_code == 0
    question = "scrub the password out of a driver error and give a one-line reason"
    result = runner.invoke(cli, ["search", "--repo", "rb", "-k", "200", "--json", question])
    assert result.exit_code == 0, result.output
    paths = [h["file_path"] for h in json.loads(result.stdout)]
    assert paths[0] == "app/db/engine.py" and len(paths) == 200
    assert "a/tests/test_engine.py" not in paths


def test_search_of_unknown_repository_is_a_clear_error(work_tree: Path) -> None:
    result = runner.invoke(cli, ["search", "--repo", "nope", "anything"])
    assert result.exit_code == 1
    assert "repository 'nope' is not indexed" in str(result.exception)


def test_index_table_output_and_estimate(work_tree: Path) -> None:
    result = runner.invoke(cli, ["index", str(work_tree), "--estimate"])
    assert result.exit_code == 0, result.output
    assert "estimate for index of reviewbot-src" in result.output
    assert "hash embedder" in result.output
    assert (
        json.loads(runner.invoke(cli, ["index", str(work_tree), "--json"]).stdout)["chunks"][
            "added"
        ]
        > 0
    )


def test_hash_embedder_note_only_when_not_chosen(
    cli_env: URL, monkeypatch: pytest.MonkeyPatch
) -> None:
    noted = CliRunner().invoke(cli, ["search", "--repo", "nothing/here", "parse a date"])
    assert "built-in hash embedder" in noted.output
    monkeypatch.setenv("REVIEWBOT_EMBEDDING_PROVIDER", "hash")  # chosen on purpose
    chosen = CliRunner().invoke(cli, ["search", "--repo", "nothing/here", "parse a date"])
    assert chosen.exit_code == noted.exit_code and "hash embedder" not in chosen.output

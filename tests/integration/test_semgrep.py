"""The optional semgrep with reviewbot's own rules, through the tools stage: each rule's
mistake found on the changed lines, its negatives left alone, nothing asked of the
network; and where semgrep is not installed, it is left out without a word.

semgrep is an extra (390 MB), so the default install skips the first test. ``.ci/run``
installs the extra in an environment of its own and sets ``CI_REQUIRE_SEMGREP=1``,
which turns a missing install into a failure."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from app.diff.parse import parse_diff
from app.tools.catalog import tool
from app.tools.policy import ToolsPolicy
from app.tools.stage import run_tools
from tests.gitrepo import GitRepo

DATA = Path(__file__).parent.parent / "data" / "tools"
REQUIRED = os.environ.get("CI_REQUIRE_SEMGREP") == "1"


def diff_of(tmp_path: Path, files: dict[str, str]) -> tuple[GitRepo, list]:  # type: ignore[type-arg]
    repo = GitRepo(tmp_path / "repo")
    repo.write("README.md", "x\n").commit("base")
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("change")
    return repo, parse_diff(repo.git("diff", "HEAD~1", "HEAD"))


@pytest.mark.semgrep
def test_reviewbots_rules_find_their_mistakes(tmp_path: Path) -> None:
    semgrep = tool("semgrep")
    if semgrep.locate() is None and not REQUIRED:
        pytest.skip("semgrep is not installed (pip install -e '.[semgrep]')")
    go = 'package main\nimport ("crypto/tls")\nvar c = &tls.Config{InsecureSkipVerify: true}\n'
    repo, diffs = diff_of(tmp_path, {"b.py": (DATA / "src-semgrep.py.txt").read_text(), "d.go": go})
    report = run_tools(
        diffs, lambda p: (repo.root / p).read_bytes(), ToolsPolicy(), tools=[semgrep]
    )
    assert report.problems == []
    found = {(f.path, f.line, f.rule) for f in report.findings}
    assert {
        ("b.py", 5, "python-shell-command-from-data"),
        ("b.py", 7, "python-yaml-load-unsafe"),
        ("b.py", 10, "python-eval-of-data"),
        ("b.py", 12, "python-tls-verification-off"),
        ("d.go", 3, "go-tls-verification-off"),
    } <= found
    assert not {line for path, line, _ in found if path == "b.py"} & {6, 8, 11}


def test_an_optional_tool_not_installed_is_left_out_quietly(tmp_path: Path) -> None:
    repo, diffs = diff_of(tmp_path, {"a.py": "x = 1\n"})
    absent = replace(tool("semgrep"), executable="no-such-semgrep")
    report = run_tools(diffs, lambda p: (repo.root / p).read_bytes(), ToolsPolicy(), tools=[absent])
    assert report.runs == [] and report.problems == []

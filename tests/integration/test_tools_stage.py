"""The tools stage on real git diffs with the real tools: findings kept on the changed
lines only; a tool that is missing, hangs, floods its output or runs out of memory is
reported and the others' findings stand; binary and huge files are skipped; the tools
see no secret of reviewbot's and run nothing of the repository's."""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from app.diff.parse import FileDiff, parse_diff
from app.tools.catalog import TOOLS, Tool, tool
from app.tools.policy import ToolsPolicy, parse_tools_config
from app.tools.sandbox import Limits
from app.tools.stage import run_tools
from tests.gitrepo import GitRepo

DATA = Path(__file__).parent.parent / "data" / "tools"


def changed(changed_repo: GitRepo, files: dict[str, str | bytes]) -> tuple[list[FileDiff], GitRepo]:
    """A commit of ``files`` on ``repo``, as the diff from its parent."""
    for path, content in files.items():
        changed_repo.write(path, content)
    changed_repo.commit("change")
    return parse_diff(changed_repo.git("diff", "HEAD~1", "HEAD")), changed_repo


def reader(changed_repo: GitRepo):  # type: ignore[no-untyped-def]
    def read(path: str) -> bytes | None:
        target = changed_repo.root / path
        return target.read_bytes() if target.is_file() else None

    return read


@pytest.fixture
def changed_repo(tmp_path: Path) -> GitRepo:
    changed_repo = GitRepo(tmp_path / "repo")
    changed_repo.write(
        "app.py", "def total(items):\n    return sum(items)\n\n\nold = undefined_before\n"
    )
    changed_repo.write("README.md", "A shop.\n")
    changed_repo.commit("base")
    return changed_repo


SEEDED = {
    "deploy.sh": (DATA / "src-deploy.sh.txt").read_text(),
    "Dockerfile": (DATA / "src-Dockerfile.txt").read_text(),
    "conf.yaml": (DATA / "src-conf.yaml.txt").read_text(),
    "keys.txt": (DATA / "src-keys.txt.txt").read_text(),
}


def test_each_tool_finds_its_seeded_problem_on_the_changed_lines_only(
    changed_repo: GitRepo,
) -> None:
    app = "def total(items):\n    return sum(items) + taxx\n\n\nold = undefined_before\n"
    diffs, _ = changed(changed_repo, {"app.py": app, **SEEDED})
    report = run_tools(diffs, reader(changed_repo), ToolsPolicy())
    found = {(f.tool, f.rule, f.path, f.line) for f in report.findings}
    assert {
        ("ruff", "F821", "app.py", 2),
        ("shellcheck", "SC2086", "deploy.sh", 3),
        ("hadolint", "DL3008", "Dockerfile", 2),
        ("yamllint", "key-duplicates", "conf.yaml", 2),
        ("detect-secrets", "AWS Access Key", "keys.txt", 1),
        ("detect-secrets", "Private Key", "keys.txt", 2),
    } <= found
    # the undefined name on line 5 was there before the change: not this review's
    assert not any(f.path == "app.py" and f.line == 5 for f in report.findings)
    assert [r.problem for r in report.runs] == [""] * len(report.runs)
    assert {r.tool for r in report.runs} >= {t.name for t in TOOLS if not t.optional}
    ordered = [f.severity for f in report.findings]
    assert ordered[0] == "critical" and ordered == sorted(
        ordered, key=["critical", "major", "minor", "nit"].index
    )


def test_the_policy_chooses_tools_paths_severity_and_context(changed_repo: GitRepo) -> None:
    diffs, _ = changed(changed_repo, SEEDED)
    policy = parse_tools_config(
        '[tools]\ndisable = ["detect-secrets"]\nskip = ["conf.yaml"]\nmin_severity = "minor"\n',
        "t",
    )
    report = run_tools(diffs, reader(changed_repo), policy)
    assert {r.tool for r in report.runs} == {"shellcheck", "hadolint", "codespell"}
    assert {f.severity for f in report.findings} <= {"critical", "major", "minor"}
    assert run_tools(diffs, reader(changed_repo), replace(policy, enabled=False)).runs == []


def script(tmp_path: Path, name: str, body: str) -> Tool:
    """A tool that is a shell script (its report: nothing, in ruff's format)."""
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return replace(tool("ruff"), name=name, executable=str(path), ok_codes=frozenset({0}))


def test_a_hanging_tool_is_killed_with_what_it_started(
    changed_repo: GitRepo, tmp_path: Path
) -> None:
    marker = f"sleep {3000 + os.getpid() % 1000}"  # this test's own sleeps
    hangs = script(tmp_path, "hangs", f"{marker} & {marker}")
    diffs, _ = changed(changed_repo, {"app.py": "x = 1\n", **SEEDED})
    report = run_tools(
        diffs, reader(changed_repo), ToolsPolicy(), Limits(seconds=1), [hangs, tool("shellcheck")]
    )
    runs = {r.tool: r for r in report.runs}
    assert runs["hangs"].problem == "stopped at its time limit (1 s)"
    assert runs["shellcheck"].problem == "" and report.findings  # the other's findings stand
    left = [p for p in Path("/proc").glob("[0-9]*") if _cmdline(p).strip() == marker]
    assert left == []


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_a_flood_of_output_is_cut_at_the_limit(changed_repo: GitRepo, tmp_path: Path) -> None:
    floods = script(tmp_path, "floods", "head -c 104857600 /dev/zero")  # 100 MB
    diffs, _ = changed(changed_repo, {"app.py": "x = 1\n"})
    report = run_tools(
        diffs, reader(changed_repo), ToolsPolicy(), Limits(output_bytes=1 << 20), [floods]
    )
    [run] = report.runs
    assert run.problem == "its report passed 1 MB and was cut" and report.findings == []


def test_a_tool_over_its_memory_limit_fails_alone(changed_repo: GitRepo, tmp_path: Path) -> None:
    greedy = script(
        tmp_path,
        "greedy",
        f"exec {os.sys.executable} -c 'x = bytearray(3 << 30)'",  # type: ignore[attr-defined]
    )
    diffs, _ = changed(changed_repo, {"app.py": "x = 1\n"})
    report = run_tools(
        diffs, reader(changed_repo), ToolsPolicy(), Limits(memory_bytes=1 << 30), [greedy]
    )
    [run] = report.runs
    assert run.problem == "failed (exit 1): MemoryError"


def test_a_missing_tool_is_reported_and_the_rest_run(changed_repo: GitRepo) -> None:
    gone = replace(tool("shellcheck"), name="gone", executable="no-such-linter-here")
    diffs, _ = changed(changed_repo, SEEDED)
    report = run_tools(diffs, reader(changed_repo), ToolsPolicy(), tools=[gone, tool("hadolint")])
    assert [(r.tool, r.problem) for r in report.runs] == [
        ("gone", "not installed"),
        ("hadolint", ""),
    ]
    assert report.problems == ["gone: not installed"]
    assert any(f.rule == "DL3008" for f in report.findings)


def test_tools_see_no_secret_of_reviewbots(
    changed_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret_token_value")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-key-value")
    seen = tmp_path / "env.txt"
    spy = script(tmp_path, "spy", f"env > {seen}")
    diffs, _ = changed(changed_repo, {"app.py": "x = 1\n"})
    run_tools(diffs, reader(changed_repo), ToolsPolicy(), tools=[spy])
    env = seen.read_text()
    assert "secret" not in env and "GITHUB_TOKEN" not in env and "OPENAI" not in env
    assert f"HOME={tmp_path}" not in env and "PATH=/usr/local/bin:/usr/bin:/bin" in env


def test_binary_and_huge_files_are_skipped(changed_repo: GitRepo) -> None:
    huge = "x = 1\n" * (2 << 20)  # 12 MB
    diffs, _ = changed(changed_repo, {"logo.sh": b"\x89PNG\0\0binary", "big.py": huge, **SEEDED})
    report = run_tools(diffs, reader(changed_repo), ToolsPolicy())
    assert sorted(report.skipped) == ["big.py: larger than 1 MB", "logo.sh: binary"]
    assert not any(f.path in {"big.py", "logo.sh"} for f in report.findings)


def test_a_repositorys_safe_configuration_is_used_and_a_broken_one_falls_back(
    changed_repo: GitRepo,
) -> None:
    long_line = "VALUE = '" + "x" * 30 + "'\n"
    diffs, _ = changed(
        changed_repo,
        {"ruff.toml": 'line-length = 20\nlint.select = ["E501"]\n', "app.py": long_line},
    )
    report = run_tools(diffs, reader(changed_repo), ToolsPolicy(), tools=[tool("ruff")])
    assert [f.rule for f in report.findings] == ["E501"] and report.runs[0].config == "ruff.toml"
    diffs, _ = changed(
        changed_repo,
        {"ruff.toml": 'lint.select = ["XYZ999"]\n', "app.py": long_line + "y = taxx\n"},
    )
    report = run_tools(diffs, reader(changed_repo), ToolsPolicy(), tools=[tool("ruff")])
    [run] = report.runs
    assert run.problem == "" and run.config.startswith("ruff.toml not usable")
    assert [f.rule for f in report.findings] == ["F821"]  # ruff's own defaults


def test_nothing_of_the_repository_runs(changed_repo: GitRepo, tmp_path: Path) -> None:
    """A detect-secrets baseline naming a plugin of its own (a file of Python), a ruff
    configuration extending a file outside the change, and a yamllint one extending a
    file: none is followed, and the plugin never ran."""
    ran = tmp_path / "plugin-ran"
    plugin = f"open({str(ran)!r}, 'w').write('ran')\n"
    baseline = (
        '{"version": "1.5.0", "plugins_used": [{"name": "Evil", "path": "file://plugin.py"}],'
        ' "filters_used": [], "results": {}}'
    )
    diffs, _ = changed(
        changed_repo,
        {
            "plugin.py": plugin,
            ".secrets.baseline": baseline,
            "pyproject.toml": '[tool.ruff]\nextend = "/etc/reviewbot.toml"\n',
            ".yamllint": "extends: /etc/passwd\n",
            "app.py": "y = taxx\n",
            "conf.yaml": "a: 1\na: 2\n",
            "keys.txt": SEEDED["keys.txt"],
        },
    )
    report = run_tools(diffs, reader(changed_repo), ToolsPolicy())
    assert not ran.exists()
    runs = {r.tool: r for r in report.runs}
    assert runs["ruff"].config.startswith("pyproject.toml not used")
    assert runs["yamllint"].config.startswith(".yamllint not used")
    assert {"F821", "key-duplicates", "AWS Access Key"} <= {f.rule for f in report.findings}


def test_doctor_lists_the_tools_with_their_versions_and_says_which_are_missing() -> None:
    from app.flows.doctor import tools as tools_check
    from app.tools.versions import tool_versions

    versions = tool_versions()
    assert set(versions) == {t.name for t in TOOLS}
    assert all(v for name, v in versions.items() if not tool(name).optional)
    found = tools_check()
    assert found.ok and f"ruff {versions['ruff']}" in found.detail
    missing = tools_check({"ruff": None, "codespell": "2.4.3"})
    assert not missing.ok and missing.detail.startswith("ruff not installed")
    assert "codespell 2.4.3" in missing.detail
    gone = replace(tool("ruff"), executable="no-such-ruff")
    assert tool_versions([gone, tool("codespell")]) == {
        "ruff": None,
        "codespell": versions["codespell"],
    }


def test_doctor_names_an_optional_tool_not_installed_without_failing() -> None:
    from app.flows.doctor import tools as tools_check

    versions = {t.name: "1.0" for t in TOOLS if not t.optional} | {"semgrep": None}
    found = tools_check(versions)
    assert found.ok and found.detail.endswith("; semgrep (optional) not installed")


def test_a_host_that_fails_to_give_a_file_leaves_the_review_without_tools(
    changed_repo: GitRepo,
) -> None:
    from app.forge.protocol import ForgeError

    def failing(path: str) -> bytes | None:
        raise ForgeError("GitHub GET /contents/deploy.sh failed with HTTP 502", 502)

    diffs, _ = changed(changed_repo, SEEDED)
    report = run_tools(diffs, failing, ToolsPolicy())
    assert report.findings == []
    assert report.problems == [
        "tools: could not run (GitHub GET /contents/deploy.sh failed with HTTP 502)"
    ]

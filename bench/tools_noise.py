"""The tools stage on real commits (issue 50): how much it says and what it costs.

The commits are the pinned co-change cases' (``bench/cases/cochange.json``, 24
repositories of Python, Go and TypeScript), the first N of each repository. Each commit
is reviewed as a pull request of one commit: its diff against its parent, the files read
from the commit (``git show``), the tools run by ``app/tools/stage.py`` with the default
``[tools]`` policy. Reported: findings per PR on the changed lines (what a review would
post), the share of all findings on the changed files that lie on changed lines, each
tool's time per PR (median, p95; a PR where the tool checks no file counts 0), and the
whole stage's time per PR.

    python -m bench.tools_noise [--per-repo 5] [--mirrors /work/.mirror] [--json F]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from app.diff.parse import parse_diff
from app.tools.policy import ToolsPolicy
from app.tools.stage import run_tools

CASES = Path(__file__).parent / "cases" / "cochange.json"


def git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, check=False
    ).stdout


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--per-repo", type=int, default=5)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    pinned = json.loads(CASES.read_text())
    rows: list[dict[str, Any]] = []
    for repo, data in sorted(pinned.items()):
        git_dir = args.mirrors / repo.replace("/", "+") / "repo"
        for case in data["cases"][: args.per_repo]:
            commit = case["commit"]
            diffs = parse_diff(git(git_dir, "diff", f"{commit}~1", commit))

            def read(path: str, commit: str = commit, git_dir: Path = git_dir) -> bytes | None:
                done = subprocess.run(
                    ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
                    capture_output=True,
                    check=False,
                )
                return done.stdout if done.returncode == 0 else None

            started = time.monotonic()
            report = run_tools(diffs, read, ToolsPolicy())
            seconds = time.monotonic() - started
            everywhere = run_tools(diffs, read, ToolsPolicy(diff_context=10**6))
            rows.append(
                {
                    "repo": repo,
                    "commit": commit,
                    "files": len(diffs),
                    "seconds": seconds,
                    "posted": Counter(f.tool for f in report.findings),
                    "severities": Counter(f.severity for f in report.findings),
                    "on_files": Counter(f.tool for f in everywhere.findings),
                    "tool_seconds": {r.tool: r.seconds for r in report.runs},
                    "problems": report.problems,
                }
            )
            print(repo, commit[:8], f"{seconds:.2f}s", dict(rows[-1]["posted"]), flush=True)
    report_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=dict))


def report_table(rows: list[dict[str, Any]]) -> None:
    tools = sorted(
        {t for r in rows for t in r["tool_seconds"]} | {t for r in rows for t in r["on_files"]}
    )
    print(f"\n{len(rows)} commits of {len({r['repo'] for r in rows})} repositories\n")
    print(
        "| tool | PRs it checked | findings per PR (posted) | PRs with any"
        " | share on changed lines | time per PR median | p95 |"
    )
    print("|---|---|---|---|---|---|---|")
    for tool in tools:
        times = [r["tool_seconds"].get(tool, 0.0) for r in rows]
        posted = [r["posted"].get(tool, 0) for r in rows]
        on_files = sum(r["on_files"].get(tool, 0) for r in rows)
        share = f"{sum(posted) / on_files:.2f}" if on_files else "-"
        print(
            f"| {tool} | {sum(1 for r in rows if tool in r['tool_seconds'])} |"
            f" {statistics.mean(posted):.2f} | {sum(1 for p in posted if p)} | {share} |"
            f" {statistics.median(times) * 1000:.0f} ms | {p95(times) * 1000:.0f} ms |"
        )
    total = [r["seconds"] for r in rows]
    posted_all = [sum(r["posted"].values()) for r in rows]
    print(
        f"| all | {len(rows)} | {statistics.mean(posted_all):.2f} |"
        f" {sum(1 for p in posted_all if p)} | | {statistics.median(total) * 1000:.0f} ms |"
        f" {p95(total) * 1000:.0f} ms |"
    )
    severities: Counter[str] = Counter()
    for r in rows:
        severities.update(r["severities"])
    print("\nposted by severity:", dict(severities))
    problems: dict[str, int] = defaultdict(int)
    for r in rows:
        for p in r["problems"]:
            problems[p.split(":")[0]] += 1
    print("\nproblems:", dict(problems) or "none")


if __name__ == "__main__":
    main()

"""A PR's database time, as a review times it (issue 34, goal 2), with each statement's
share.

One repository (pallets/click by default, about 2,000 chunks) is indexed at an older
commit with its history mined, as the App keeps it. Each "PR" is the fewest commits
from one of ``--prs`` evenly spaced commits after it that change at least
``--functions`` functions, of which the ``--functions`` most changed are searched (as
``retrieval_max_functions`` would pick).
Each PR's retrieval runs as ``retrieve_context`` runs it (``retrieval_candidates``: the
repository check, the stale rows, every signal, the candidates' load), and
``database_s`` is what a review reports. Every PR runs ``--rounds`` times, the first
round a warm-up; percentiles are over the later rounds.

    python -W ignore -m bench.pr_database --mirror /work/.mirror/pallets+click/repo
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.recall_cases import git_bytes
from bench.retrieval_runner import ProductRunner, percentile


def first_parents(git_dir: str, base: str) -> list[str]:
    """The first-parent commits after ``base``, oldest first."""
    return (
        git_bytes(git_dir, "rev-list", "--first-parent", "--reverse", f"{base}..HEAD")
        .decode()
        .split()
    )


@contextmanager
def statement_profile(engine: Any) -> Iterator[dict[str, list[float]]]:
    """Seconds per statement, keyed by the statement's first words."""
    from sqlalchemy import event

    spent: dict[str, list[float]] = defaultdict(list)

    def before(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        conn.info.setdefault("started", []).append(time.perf_counter())

    def after(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        began = conn.info["started"].pop()
        spent[" ".join(statement.split())[:70]].append(time.perf_counter() - began)

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    try:
        yield spent
    finally:
        event.remove(engine, "before_cursor_execute", before)
        event.remove(engine, "after_cursor_execute", after)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mirror", default="/work/.mirror/pallets+click/repo")
    parser.add_argument("--repo", default="pallets/click")
    parser.add_argument("--back", type=int, default=400, help="index this many commits back")
    parser.add_argument("--prs", type=int, default=30)
    parser.add_argument("--functions", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--embedder", choices=["hash", "local"], default="hash")
    parser.add_argument(
        "--data-dir", type=Path, help="keep the database here (default: a temporary one)"
    )
    args = parser.parse_args()

    from app.config import Settings
    from app.db.engine import open_database
    from app.diff.changed import changed_functions
    from app.diff.parse import parse_diff
    from app.git import LocalRepo
    from app.indexing.embedder import HashEmbedder, LocalEmbedder
    from app.retrieval.retrieve import ContextResult, most_changed, retrieval_candidates

    git_dir = args.mirror
    base = (
        git_bytes(git_dir, "rev-list", "--first-parent", "-n", "1", f"HEAD~{args.back}")
        .decode()
        .strip()
    )
    local = LocalRepo(Path(git_dir))
    # the server may still be writing its last WAL as it stops: a results file must not be lost
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        settings = Settings(data_dir=args.data_dir or Path(tmp) / "data")
        with open_database(settings) as db:
            embedder = HashEmbedder() if args.embedder == "hash" else LocalEmbedder()
            runner = ProductRunner(db.engine, embedder)
            started = time.perf_counter()
            runner.index(args.repo, git_dir, base)
            chunks = db.engine.connect().exec_driver_sql("SELECT count(*) FROM code_chunks")
            print(
                f"indexed {args.repo} at {base[:10]}: {chunks.scalar()} chunks,"
                f" {time.perf_counter() - started:.0f} s"
            )
            prs = []
            line = first_parents(git_dir, base)
            step = max(1, len(line) // args.prs)
            for first in range(0, len(line) - 1, step):
                # a PR: the fewest commits from here that change enough functions
                for last in range(first + 1, min(len(line), first + 60)):
                    start, end = line[first], line[last]
                    diffs = parse_diff(git_bytes(git_dir, "diff", start, end))
                    sides = {"old": start, "new": end}
                    changed = changed_functions(
                        diffs, lambda path, side, s=sides: local.read(s[side], path)
                    )
                    searched = [c for c in changed if c.chunk.language is not None]
                    if len(searched) >= args.functions:
                        prs.append((diffs, most_changed(searched, args.functions)))
                        break
            print(f"{len(prs)} PRs of {args.functions} searched functions")
            times: list[float] = []
            with statement_profile(db.engine) as spent:
                for round_ in range(args.rounds):
                    if round_ == 1:
                        spent.clear()
                    for diffs, changed in prs:
                        result = ContextResult(changed, [], 0, 0, "")
                        retrieval_candidates(
                            db.engine,
                            args.repo,
                            diffs,
                            changed,
                            runner.embedder,
                            runner.settings,
                            result,
                        )
                        if round_:
                            times.append(result.timings["database_s"])
            runs = len(times)
            print(
                f"\ndatabase_s per PR over {runs} runs: p50 {statistics.median(times) * 1000:.1f}"
                f" ms, p95 {percentile(times, 0.95) * 1000:.1f} ms,"
                f" max {max(times) * 1000:.1f} ms"
            )
            print("slowest:", " ".join(f"{t * 1000:.0f}" for t in sorted(times)[-8:]), "ms")
            print("\nstatements per PR (mean ms, count per PR):")
            for name, values in sorted(spent.items(), key=lambda kv: -sum(kv[1])):
                print(f"  {sum(values) / runs * 1000:7.2f} ms  x{len(values) / runs:4.1f}  {name}")


if __name__ == "__main__":
    main()

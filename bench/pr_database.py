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
round a warm-up; percentiles are over the later rounds. Then ``--replay`` PRs run again
with their signals one after another on one connection, and each statement they ran is
run again alone (best of three): the statements' floor, and the Python around them.

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


def statement_key(statement: str) -> str:
    """A statement's first words, as the profile names it."""
    return " ".join(statement.split())[:70]


@contextmanager
def captured_statements(engine: Any) -> Iterator[list[tuple[str, Any]]]:
    """Every statement run on ``engine`` while open, with its parameters."""
    from sqlalchemy import event

    captured: list[tuple[str, Any]] = []

    def before(conn: Any, cursor: Any, statement: str, parameters: Any, *args: Any) -> None:
        captured.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", before)
    try:
        yield captured
    finally:
        event.remove(engine, "before_cursor_execute", before)


def replayed(engine: Any, captured: list[tuple[str, Any]], runs: int = 3) -> dict[str, float]:
    """Seconds of each statement run alone, one after another on one connection (the
    best of ``runs``), summed by statement: what the statements cost without a review's
    threads competing for the two cores. ``SET`` statements are left out."""
    spent: dict[str, float] = defaultdict(float)
    raw = engine.raw_connection()
    try:
        with raw.cursor() as cur:
            for statement, parameters in captured:
                if statement.lstrip().upper().startswith("SET"):
                    continue
                best = float("inf")
                for _ in range(runs):
                    began = time.perf_counter()
                    cur.execute(statement, parameters)
                    if cur.description is not None:
                        cur.fetchall()
                    best = min(best, time.perf_counter() - began)
                spent[statement_key(statement)] += best
        raw.rollback()
    finally:
        raw.close()
    return spent


@contextmanager
def statement_profile(engine: Any) -> Iterator[dict[str, list[float]]]:
    """Seconds per statement, keyed by the statement's first words."""
    from sqlalchemy import event

    spent: dict[str, list[float]] = defaultdict(list)

    def before(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        conn.info.setdefault("started", []).append(time.perf_counter())

    def after(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        began = conn.info["started"].pop()
        spent[statement_key(statement)].append(time.perf_counter() - began)

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
        "--replay",
        type=int,
        default=8,
        help="replay each statement of this many PRs alone (their floor); 0: none",
    )
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

                    def read(path: str, side: str, s: dict[str, str] = sides) -> bytes | None:
                        return local.read(s[side], path)

                    changed = changed_functions(diffs, read)
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
            if args.replay:
                replay(db.engine, prs[: args.replay], args.repo, runner)


def replay(engine: Any, prs: list[Any], repo: str, runner: ProductRunner) -> None:
    """Each statement of ``prs`` run again alone, and the Python around them: a review's
    retrieval run with its signals one after another on one connection (no threads), its
    ``database_s`` against the sum of its statements run alone."""
    import app.retrieval.candidates as candidates
    from app.retrieval.retrieve import ContextResult, retrieval_candidates

    threaded = candidates.function_evidence

    def one_connection(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop("engine", None)
        return threaded(*args[:6], **kwargs)

    candidates.function_evidence = one_connection
    sequential: list[float] = []
    try:
        with captured_statements(engine) as captured:
            for diffs, changed in prs:
                result = ContextResult(changed, [], 0, 0, "")
                retrieval_candidates(
                    engine, repo, diffs, changed, runner.embedder, runner.settings, result
                )
                sequential.append(result.timings["database_s"])
    finally:
        candidates.function_evidence = threaded
    alone = replayed(engine, captured)
    count = len(prs)
    total = sum(alone.values()) / count
    print(
        f"\none connection, no threads, {count} PRs: database_s mean"
        f" {statistics.mean(sequential) * 1000:.1f} ms, of which the statements run alone"
        f" {total * 1000:.1f} ms (the rest: Python and the rows' transfer)"
    )
    print("statements run alone, best of 3 (mean ms per PR):")
    for name, seconds in sorted(alone.items(), key=lambda kv: -kv[1]):
        print(f"  {seconds / count * 1000:7.2f} ms  {name}")


if __name__ == "__main__":
    main()

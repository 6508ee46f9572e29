"""How sure a benchmark figure is: paired bootstrap intervals over the cases.

A criterion compares reviewbot with a baseline on the same cases ("co-change MRR at least
BM25's") or with a bar ("structural R@4000 at least 0.80"). A held-out language has one
repository of 15 cases, and a difference of a few hundredths between two retrievers on
them is within what another 15 cases could give. This resamples the cases (with
replacement, each keeping both retrievers' scores, so the pairing stays) and reports the
mean difference, its 95% interval and the share of resamples in which the difference is
at least zero. It reads the per-case files the benchmarks write (``recall_bench --json``,
``cochange_bench --out``'s ``*.json``, ``question_bench --json``).

Cases of one repository share its conventions, so they are not independent draws: a
third held-out Java repository scored 0.557 at structural R@4000, far below the interval
the first two's 30 cases gave (0.74 to 0.95). ``--by-repository`` resamples whole
repositories instead (each with all its cases: a cluster bootstrap), the interval for
"another set of repositories like these"; it needs several repositories to mean anything.

    python -m bench.intervals FILE [FILE ...] --metric MRR --a reviewbot --b BM25
    python -m bench.intervals FILE [FILE ...] --metric R@4000 --a reviewbot --bar 0.80 \\
        --language java --held-out [--by-repository]
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

Row = Mapping[str, Any]
#: A case: its repository and commit (one commit may be a case of two benchmarks).
CaseKey = tuple[str, str]


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    cases: int
    #: the share of resamples whose mean difference is at least zero
    at_least_zero: float
    #: how many repositories were resampled whole (None: the cases were)
    repositories: int | None = None

    def __str__(self) -> str:
        drawn = "" if self.repositories is None else f" in {self.repositories} repositories"
        return (
            f"{self.mean:+.3f} [{self.low:+.3f}, {self.high:+.3f}],"
            f" {self.cases} case{'' if self.cases == 1 else 's'}{drawn},"
            f" at least zero in {self.at_least_zero:.0%} of resamples"
        )


def read_rows(paths: Iterable[Path]) -> list[Row]:
    """The per-case rows of benchmark files: a list of rows, or ``{"rows": [...]}``."""
    rows: list[Row] = []
    for path in paths:
        data = json.loads(path.read_text())
        rows += data["rows"] if isinstance(data, dict) else data
    return rows


def scores_by_case(
    rows: Iterable[Row], retriever: str, metric: str, keep: Callable[[Row], bool]
) -> dict[CaseKey, float]:
    return {
        (r["repo"], r["commit"]): float(r[metric])
        for r in rows
        if r["retriever"] == retriever and keep(r)
    }


def paired(a: Mapping[CaseKey, float], b: Mapping[CaseKey, float] | float) -> dict[CaseKey, float]:
    """Per case, ``a`` less ``b`` (a baseline's score on the same case, or a bar); cases
    the baseline lacks are left out. Pure."""
    if isinstance(b, Mapping):
        return {case: score - b[case] for case, score in sorted(a.items()) if case in b}
    return {case: score - b for case, score in sorted(a.items())}


def by_repository(diffs: Mapping[CaseKey, float]) -> list[list[float]]:
    """The differences grouped by repository (in name order). Pure."""
    groups: dict[str, list[float]] = {}
    for (repo, _), value in sorted(diffs.items()):
        groups.setdefault(repo, []).append(value)
    return list(groups.values())


def bootstrap(
    values: Sequence[float], draws: int = 10_000, seed: int = 0, level: float = 0.95
) -> Interval:
    """The mean of ``values`` and its percentile bootstrap interval. Pure (seeded)."""
    return _resample([[v] for v in values], draws, seed, level)


def cluster_bootstrap(
    groups: Sequence[Sequence[float]], draws: int = 10_000, seed: int = 0, level: float = 0.95
) -> Interval:
    """The mean over every value of ``groups`` and its percentile interval, resampling
    whole groups (a repository's cases together). Pure (seeded)."""
    interval = _resample(groups, draws, seed, level)
    return replace(interval, repositories=sum(1 for g in groups if g))


def _resample(groups: Sequence[Sequence[float]], draws: int, seed: int, level: float) -> Interval:
    """Draw as many groups as there are, with replacement, ``draws`` times; the mean
    of each draw is over the values of the groups drawn. One value a group is the
    plain bootstrap over cases."""
    groups = [g for g in groups if g]
    if not groups:
        raise ValueError("no cases to resample")
    rng = random.Random(seed)
    sums = [sum(g) for g in groups]
    sizes = [len(g) for g in groups]
    indices = range(len(groups))
    means = []
    for _ in range(draws):
        drawn = rng.choices(indices, k=len(groups))
        means.append(sum(sums[i] for i in drawn) / sum(sizes[i] for i in drawn))
    means.sort()
    tail = (1 - level) / 2
    return Interval(
        mean=sum(sums) / sum(sizes),
        low=means[int(tail * draws)],
        high=means[min(int((1 - tail) * draws), draws - 1)],
        cases=sum(sizes),
        at_least_zero=sum(m >= 0 for m in means) / draws,
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("files", type=Path, nargs="+", help="per-case benchmark files")
    parser.add_argument("--metric", required=True, help="e.g. MRR, R@4000, 'lines R@4000'")
    parser.add_argument("--a", default="reviewbot", help="the retriever measured")
    baseline = parser.add_mutually_exclusive_group(required=True)
    baseline.add_argument("--b", help="the baseline retriever, on the same cases")
    baseline.add_argument("--bar", type=float, help="a fixed bar instead of a baseline")
    parser.add_argument("--language", help="only these languages (comma-separated)")
    parser.add_argument("--held-out", action="store_true", help="only held-out cases")
    parser.add_argument(
        "--by-repository", action="store_true", help="resample repositories, not cases"
    )
    parser.add_argument("--draws", type=int, default=10_000)
    args = parser.parse_args(argv)
    languages = set(args.language.split(",")) if args.language else None

    def keep(row: Row) -> bool:
        if args.held_out and not row.get("held_out"):
            return False
        return languages is None or row.get("language") in languages

    rows = read_rows(args.files)
    try:
        a = scores_by_case(rows, args.a, args.metric, keep)
        b = args.bar if args.b is None else scores_by_case(rows, args.b, args.metric, keep)
        diffs = paired(a, b)
        if args.by_repository:
            interval = cluster_bootstrap(by_repository(diffs), args.draws)
        else:
            interval = bootstrap(list(diffs.values()), args.draws)
    except KeyError as missing:
        raise SystemExit(f"the files' rows have no {missing}: see the metrics they hold") from None
    except ValueError:
        raise SystemExit(
            "no case has both retrievers (check --a, --b, --language, --held-out)"
        ) from None
    against = f"{args.bar}" if args.b is None else args.b
    print(f"{args.a} - {against}, {args.metric}: {interval}")


if __name__ == "__main__":
    main()

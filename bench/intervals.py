"""How sure a benchmark figure is: paired bootstrap intervals over the cases.

A criterion compares reviewbot with a baseline on the same cases ("co-change MRR at least
BM25's") or with a bar ("structural R@4000 at least 0.80"). A held-out language has one
repository of 15 cases, and a difference of a few hundredths between two retrievers on
them is within what another 15 cases could give. This resamples the cases (with
replacement, each keeping both retrievers' scores, so the pairing stays) and reports the
mean difference, its 95% interval and the share of resamples in which the difference is
at least zero. It reads the per-case files the benchmarks write (``recall_bench --json``,
``cochange_bench --out``'s ``*.json``, ``question_bench --json``).

    python -m bench.intervals FILE [FILE ...] --metric MRR --a reviewbot --b BM25
    python -m bench.intervals FILE [FILE ...] --metric R@4000 --a reviewbot --bar 0.80 \\
        --language java --held-out
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
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

    def __str__(self) -> str:
        return (
            f"{self.mean:+.3f} [{self.low:+.3f}, {self.high:+.3f}],"
            f" {self.cases} case{'' if self.cases == 1 else 's'},"
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


def differences(a: Mapping[CaseKey, float], b: Mapping[CaseKey, float] | float) -> list[float]:
    """Per case, ``a`` less ``b`` (a baseline's score on the same case, or a bar); cases
    the baseline lacks are left out. Pure."""
    if isinstance(b, Mapping):
        return [score - b[case] for case, score in sorted(a.items()) if case in b]
    return [score - b for _, score in sorted(a.items())]


def bootstrap(
    values: Sequence[float], draws: int = 10_000, seed: int = 0, level: float = 0.95
) -> Interval:
    """The mean of ``values`` and its percentile bootstrap interval. Pure (seeded)."""
    if not values:
        raise ValueError("no cases to resample")
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(draws))
    tail = (1 - level) / 2
    return Interval(
        mean=sum(values) / n,
        low=means[int(tail * draws)],
        high=means[min(int((1 - tail) * draws), draws - 1)],
        cases=n,
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
        interval = bootstrap(differences(a, b), args.draws)
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

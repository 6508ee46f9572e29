"""Fit the ranking weights (``app/retrieval/ranking.py`` ``RankingWeights``) on the
structural and co-change benchmarks together, so that neither kind of context crowds
the other out of one budget.

Input: the ``--dump`` files of ``bench/recall_bench.py`` and ``bench/cochange_bench.py``
(every candidate of every case, with its evidence and cost, and the case's targets).
The objective is the mean over both benchmarks of R@2000, R@4000 and R@8000, computed
exactly as the benchmarks compute them, with the product's own ranking and
de-duplication (``rank_context``). Coordinate search from the current weights over a
grid of values, a few rounds; then the fit is checked on the cases it was not fitted
on (odd cases fit, even cases held out, and the other way round).

    python -m bench.fit_ranking /tmp/structural_dump.json /tmp/cochange_dump.json

``--hold-structural`` fits only co-change recall, with the structural benchmark's held
(``held_structural``): the default weights were fitted so.

``--report`` fits nothing: it prints the product's current weights per benchmark and
language, and the same without the vector signal (a review made before a repository's
summaries and embeddings are done: ``app/flows/enrich.py``).

``--question`` fits ``QUESTION_WEIGHTS`` (``/ask``'s search signals) on the ``--dump`` of
``bench/question_bench.py`` instead, by MRR and R@10 of the first ten items.

    python -m bench.fit_ranking --question /tmp/question_dump.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, fields, replace
from typing import Any

from app.config import MAX_CHUNKS_PER_FILE
from app.retrieval.context_chunk import ContextChunk
from app.retrieval.evidence import Evidence
from app.retrieval.ranking import rank_context
from app.retrieval.weights import (
    QUESTION_MAX_PER_FILE,
    QUESTION_WEIGHTS,
    RankingWeights,
    question_score,
)

BUDGETS = (2000, 4000, 8000)
#: The weights a diff's context was ranked by before the relevance model: the reference.
DEFAULT_WEIGHTS = RankingWeights()
GRID = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0)


def load(paths: Sequence[str]) -> list[dict[str, Any]]:
    cases = []
    for path in paths:
        with open(path) as f:
            cases += json.load(f)
    for case in cases:
        case["chunks"] = [
            ContextChunk(
                i,
                c["path"],
                c["start"],
                c["end"],
                None,
                None,
                c["chunk_type"],
                None,
                None,
                "",
                evidence=Evidence(**c["evidence"]),
                tokens=c.get("shown") or c["cost"],  # what is shown (``excerpts``)
                secondary=c["secondary"],
                window_from=c.get("window_from", 0),
                # an excerpt's whole code (``cost``), which its rank is priced by too
                whole_tokens=c["cost"] if c.get("shown", c["cost"]) != c["cost"] else 0,
            )
            for i, c in enumerate(case["candidates"])
        ]
        # each candidate's line-range cost, by its chunk id (0 where the dump predates it)
        case["lines"] = [c.get("lines", 0) for c in case["candidates"]]
        if not all(case["lines"]):
            case["lines"] = []
    return cases


def hits(chunk: ContextChunk, target: Sequence[Any]) -> bool:
    path, start, _ = target
    if chunk.file_path != path or not chunk.start_line <= start <= chunk.end_line:
        return False
    return chunk.chunk_type != "class" or start <= chunk.start_line + 3


def recall_at(case: dict[str, Any], weights: RankingWeights) -> dict[str, float]:
    return recall_of(case, [replace(c, score=weights.score(c.evidence)) for c in case["chunks"]])


def recall_of(case: dict[str, Any], scored: Sequence[ContextChunk]) -> dict[str, float]:
    """R@each budget and MRR of ``case``'s candidates ranked by their scores."""
    ranked = rank_context([c for c in scored if c.score > 0], MAX_CHUNKS_PER_FILE)
    targets = case["targets"]
    found: dict[str, float] = {}
    costings = {"R": lambda c: c.tokens}
    if case.get("lines"):  # dumps that cost each candidate by its line range too
        costings["lines R"] = lambda c: case["lines"][c.chunk_id]
    for name, cost in costings.items():
        for budget in BUDGETS:
            used, taken = 0, []
            for chunk in ranked:
                if used + cost(chunk) <= budget:
                    used += cost(chunk)
                    taken.append(chunk)
            hit = sum(any(hits(c, t) for c in taken) for t in targets)
            found[f"{name}@{budget}"] = hit / len(targets)
    first = next((i for i, c in enumerate(ranked, 1) if any(hits(c, t) for t in targets)), None)
    found["MRR"] = 1 / first if first else 0.0
    return found


def evaluate(cases: Sequence[dict[str, Any]], weights: RankingWeights) -> dict[str, float]:
    """Mean of each metric per benchmark, and the objective."""
    per: dict[str, list[dict[str, float]]] = defaultdict(list)
    for case in cases:
        per[case["benchmark"]].append(recall_at(case, weights))
    out: dict[str, float] = {}
    for benchmark, rows in per.items():
        for metric in rows[0]:
            out[f"{benchmark} {metric}"] = statistics.mean(r[metric] for r in rows)
    out["objective"] = statistics.mean(out[f"{b} R@{budget}"] for b in per for budget in BUDGETS)
    return out


#: ``--hold-structural``: the weights it searches, in order, and their finer grid
HELD_NAMES = ("words", "coupled_words", "cochange", "lexical", "vector", "sibling", "removed")
HELD_GRID = (0.0, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5)


def fit(
    cases: Sequence[dict[str, Any]],
    start: RankingWeights,
    rounds: int = 3,
    objective: Callable[[dict[str, float]], float] = lambda m: m["objective"],
    names: Sequence[str] = (),
    grid: Sequence[float] = GRID,
) -> RankingWeights:
    best, best_score = start, objective(evaluate(cases, start))
    # link fixes the scale
    names = names or [f.name for f in fields(RankingWeights) if f.name != "link"]
    for _ in range(rounds):
        improved = False
        for name in names:
            for value in grid:
                trial = replace(best, **{name: value})
                score = objective(evaluate(cases, trial))
                if score > best_score + 1e-9:
                    best, best_score, improved = trial, score, True
        if not improved:
            break
    return best


def held_structural(start: dict[str, float]) -> Callable[[dict[str, float]], float]:
    """Co-change recall (the mean of R@2000, R@4000 and R@8000, and a fifth of MRR) while
    the structural benchmark keeps what ``start`` had: R@4000 and R@8000 (to 0.001 and
    0.005) and MRR (to 0.015). A free fit trades callees for co-changed code."""

    def objective(m: dict[str, float]) -> float:
        cochange = statistics.mean(m[f"cochange R@{b}"] for b in BUDGETS)
        cochange += 0.2 * m["cochange MRR"]
        held = (
            m["structural R@4000"] >= start["structural R@4000"] - 0.001
            and m["structural R@8000"] >= start["structural R@8000"] - 0.005
            and m["structural MRR"] >= start["structural MRR"] - 0.015
        )
        return cochange if held else cochange - 1

    return objective


def report(cases: Sequence[dict[str, Any]]) -> None:
    """A markdown table: each benchmark and language, with and without the vector signal."""
    print("| weights | benchmark | language | cases | R@2000 | R@4000 | R@8000 | MRR |")
    print("|---|---|---|---|---|---|---|---|")
    for label, weights in (
        ("current", DEFAULT_WEIGHTS),
        ("without vector", replace(DEFAULT_WEIGHTS, vector=0.0)),
    ):
        groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for case in cases:
            groups[(case["benchmark"], "all")].append(case)
            groups[(case["benchmark"], case.get("language", "?"))].append(case)
        for (benchmark, language), group in sorted(groups.items()):
            rows = [recall_at(c, weights) for c in group]
            cells = " | ".join(
                f"{statistics.mean(r[m] for r in rows):.3f}"
                for m in ("R@2000", "R@4000", "R@8000", "MRR")
            )
            print(f"| {label} | {benchmark} | {language} | {len(group)} | {cells} |")


#: The search signals a question has, and how many chunks of a file ``/ask`` keeps.
QUESTION_FIELDS = ("lexical", "vector", "words")
QUESTION_PER_FILE = QUESTION_MAX_PER_FILE


def question_scores(case: dict[str, Any], weights: RankingWeights) -> dict[str, float]:
    """MRR and R@10 of one question as ``/ask`` ranks its candidates under ``weights``."""
    scored = [
        replace(c, score=question_score(weights, c.evidence, c.chunk_type)) for c in case["chunks"]
    ]
    ranked = rank_context([c for c in scored if c.score > 0], QUESTION_PER_FILE)
    targets = case["targets"]
    first = next((i for i, c in enumerate(ranked, 1) if any(hits(c, t) for t in targets)), None)
    top = ranked[:10]
    return {
        "MRR": 1 / first if first else 0.0,
        "R@10": sum(any(hits(c, t) for c in top) for t in targets) / len(targets),
    }


def fit_question(cases: Sequence[dict[str, Any]]) -> None:
    """Coordinate search over the question's signal weights (one held at 1), by MRR."""

    def mrr(weights: RankingWeights) -> float:
        return statistics.mean(question_scores(c, weights)["MRR"] for c in cases)

    best, best_score = QUESTION_WEIGHTS, mrr(QUESTION_WEIGHTS)
    print(f"current {asdict(best)}: MRR {best_score:.3f}")
    for _ in range(3):
        improved = False
        for name in QUESTION_FIELDS[1:]:
            for value in GRID:
                trial = replace(best, **{name: value})
                if (found := mrr(trial)) > best_score + 1e-9:
                    best, best_score, improved = trial, found, True
        if not improved:
            break
    print(f"fitted {[(n, getattr(best, n)) for n in QUESTION_FIELDS]}: MRR {best_score:.3f}")
    for label, weights in (("current", QUESTION_WEIGHTS), ("fitted", best)):
        for alone in (None, *QUESTION_FIELDS):
            w = (
                weights
                if alone is None
                else replace(weights, **{n: (1.0 if n == alone else 0.0) for n in QUESTION_FIELDS})
            )
            rows = [question_scores(c, w) for c in cases]
            means = {m: statistics.mean(r[m] for r in rows) for m in ("MRR", "R@10")}
            print(f"{label} {alone or 'fused'}: MRR {means['MRR']:.3f}, R@10 {means['R@10']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dumps", nargs="+")
    parser.add_argument("--report", action="store_true", help="evaluate only (see above)")
    parser.add_argument("--question", action="store_true", help="fit QUESTION_WEIGHTS")
    parser.add_argument(
        "--hold-structural",
        action="store_true",
        help="fit co-change recall with the structural benchmark held (held_structural)",
    )
    args = parser.parse_args()
    cases = load(args.dumps)
    print(f"{len(cases)} cases")
    if args.question:
        fit_question(cases)
        return
    if args.report:
        report(cases)
        return
    current = evaluate(cases, DEFAULT_WEIGHTS)
    print("current:", _fmt(current))
    if args.hold_structural:
        held = held_structural(current)
        fitted = fit(cases, DEFAULT_WEIGHTS, 2, held, HELD_NAMES, HELD_GRID)
        print("fitted weights:", asdict(fitted))
        print("fitted:", _fmt(evaluate(cases, fitted)))
        return
    fitted = fit(cases, DEFAULT_WEIGHTS)
    print("fitted weights:", asdict(fitted))
    print("fitted:", _fmt(evaluate(cases, fitted)))
    odd, even = cases[1::2], cases[0::2]
    for name, train, test in (("odd->even", odd, even), ("even->odd", even, odd)):
        half = fit(train, DEFAULT_WEIGHTS)
        print(f"{name}: weights {asdict(half)}")
        print(f"  held out: {_fmt(evaluate(test, half))}")
        print(f"  all-data weights on the same held-out half: {_fmt(evaluate(test, fitted))}")


def _fmt(metrics: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.3f}" for k, v in sorted(metrics.items()))


if __name__ == "__main__":
    main()

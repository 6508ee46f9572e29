"""Fit the relevance model (``app/retrieval/relevance.py``) on benchmark dumps.

A candidate is positive when it holds a target (``fit_ranking.hits``). The model is an
L2-regularised logistic regression over ``relevance.FEATURES``, fitted by Newton's
method. It is judged as the product uses it: candidates ranked by probability per token
(to each size exponent given), de-duplicated and packed like ``fit_ranking``.

Every figure of the model is held out: the cases of each repository are ranked by a
model fitted without that repository, so the numbers say what to expect on code the fit
never saw (the first rows, for reference, are ``RankingWeights``, fitted on these very
cases). The last lines are the model fitted on every case, as Python for
``DIFF_RELEVANCE``.

    python -m bench.fit_relevance DUMP [DUMP ...] [--exponents 0.75,1,1.25] [--l2 0.33]
    python -m bench.fit_relevance DUMP [DUMP ...] --exponents 1 --write FILE

``--write`` stores the model fitted on every case with its provenance (this project's
commit, the cases' hash, the repositories, the embedder, the hyper-parameters and the
held-out-by-repository figures) where the product reads it,
``app/retrieval/relevance_model.json``. Fit on in-sample repositories only
(``bench/cases/cochange.json``): a held-out one is refused.

The dumps are ``cochange_bench --out`` and ``recall_bench --dump`` files (they name the
files each diff touched).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from app.retrieval.relevance import (
    FEATURES,
    MIN_TOKENS,
    RelevanceModel,
    Touched,
    features,
    scored,
)
from bench.cochange_bench import HELD_OUT
from bench.fit_ranking import BUDGETS, DEFAULT_WEIGHTS, hits, load, recall_at, recall_of


def design(case: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The case's feature matrix and its labels (1: the candidate holds a target)."""
    touched = Touched.of(case["changed"])
    x = np.array([features(c, touched) for c in case["chunks"]], dtype=float)
    y = np.array([any(hits(c, t) for t in case["targets"]) for c in case["chunks"]], dtype=float)
    return x.reshape(len(case["chunks"]), len(FEATURES)), y


def fit_logistic(
    x: np.ndarray, y: np.ndarray, l2: float, weights: np.ndarray | None = None
) -> tuple[float, np.ndarray]:
    """(intercept, coefficients) minimising the log loss, each candidate's by its weight
    (1 unless ``weights`` says), plus ``l2`` / 2 * |coefficients|^2 (the intercept is not
    penalised)."""
    a = np.hstack([np.ones((len(x), 1)), x])
    sw = np.ones(len(y)) if weights is None else weights
    w = np.zeros(a.shape[1])
    penalty = np.full(a.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ w, -35, 35)))
        gradient = a.T @ (sw * (p - y)) + penalty * w
        hessian = (a * (sw * p * (1 - p))[:, None]).T @ a + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return float(w[0]), w[1:]


def model_of(
    intercept: float, coefficients: np.ndarray, exponent: float, min_tokens: int = MIN_TOKENS
) -> RelevanceModel:
    named = {n: round(float(c), 4) for n, c in zip(FEATURES, coefficients, strict=True)}
    return RelevanceModel(round(intercept, 4), named, exponent, min_tokens)


def ranked_by(case: dict[str, Any], model: RelevanceModel) -> dict[str, float]:
    return recall_of(case, scored(case["chunks"], case["changed"], model))


def benchmark_weights(cases: Sequence[dict[str, Any]]) -> list[float]:
    """Each case's weight in the fit, so that each benchmark weighs the same whatever its
    number of cases (they average 1): unweighted, the mix of dumps given sets the trade
    between linked code and what must change with it (bench/RESULTS.md, "One model for
    every language")."""
    counts = Counter(c["benchmark"] for c in cases)
    return [len(cases) / (len(counts) * counts[c["benchmark"]]) for c in cases]


def fit_cases(
    cases: Sequence[dict[str, Any]],
    data: Sequence[tuple[np.ndarray, np.ndarray]],
    l2: float,
    balance: bool,
) -> tuple[float, np.ndarray]:
    """The model fitted on ``cases`` (``data``: their ``design``), each benchmark weighing
    the same when ``balance``."""
    x, y = np.vstack([d[0] for d in data]), np.concatenate([d[1] for d in data])
    if not balance:
        return fit_logistic(x, y, l2)
    per_case = benchmark_weights(cases)
    weights = np.concatenate([np.full(len(d[1]), w) for d, w in zip(data, per_case, strict=True)])
    return fit_logistic(x, y, l2, weights)


def held_out(
    cases: Sequence[dict[str, Any]],
    l2: float,
    exponents: Sequence[float],
    min_tokens: int = MIN_TOKENS,
    balance: bool = False,
) -> dict[float, list[tuple[dict[str, Any], dict[str, float]]]]:
    """Per exponent, each case's metrics under a model fitted without its repository."""
    data = [design(c) for c in cases]
    out: dict[float, list[tuple[dict[str, Any], dict[str, float]]]] = defaultdict(list)
    for repo in sorted({c["repo"] for c in cases}):
        train = [i for i, c in enumerate(cases) if c["repo"] != repo]
        intercept, coefficients = fit_cases(
            [cases[i] for i in train], [data[i] for i in train], l2, balance
        )
        for case in (c for c in cases if c["repo"] == repo):
            for exponent in exponents:
                model = model_of(intercept, coefficients, exponent, min_tokens)
                out[exponent].append((case, ranked_by(case, model)))
    return out


def table(rows: Sequence[tuple[dict[str, Any], dict[str, float]]], label: str) -> None:
    for benchmark in sorted({c["benchmark"] for c, _ in rows}):
        mine = [(c, m) for c, m in rows if c["benchmark"] == benchmark]
        cells = [statistics.mean(m[k] for _, m in mine) for k in (*_budget_keys(), "MRR")]
        languages = [
            f"{lang} {statistics.mean(m['R@4000'] for c, m in mine if c['language'] == lang):.2f}"
            for lang in sorted({c["language"] for c, _ in mine})
        ]
        # costed by line ranges, where the dumps say what each candidate's range costs
        lines = [
            statistics.mean(m[f"lines {k}"] for _, m in mine)
            for k in _budget_keys()
            if all(f"lines {k}" in m for _, m in mine)
        ]
        print(
            f"| {label} | {benchmark} | {len(mine)} | "
            + " | ".join(f"{v:.3f}" for v in cells)
            + " | "
            + ", ".join(languages)
            + " | "
            + " / ".join(f"{v:.3f}" for v in lines)
            + " |"
        )


def _budget_keys() -> list[str]:
    return [f"R@{b}" for b in BUDGETS]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("dumps", nargs="+")
    parser.add_argument("--exponents", default="0.75,1,1.25", help="size exponents to judge")
    parser.add_argument("--l2", type=float, default=0.33, help="the coefficients' penalty")
    parser.add_argument("--min-tokens", type=int, default=MIN_TOKENS, help="size floor")
    parser.add_argument("--write", help="store the model and its provenance in this file")
    parser.add_argument("--embedder", default="hash", help="the dumps' embedder (recorded)")
    parser.add_argument(
        "--balance", action="store_true", help="each benchmark weighs the same in the fit"
    )
    args = parser.parse_args()
    cases = [c for c in load(args.dumps) if c["benchmark"] != "question"]
    held = sorted({c["repo"] for c in cases} & HELD_OUT)
    if held:
        raise SystemExit(f"held-out repositories are never fitted on: {', '.join(held)}")
    missing = [c["commit"] for c in cases if "changed" not in c]
    if missing:
        raise SystemExit(f"{len(missing)} cases name no touched files (old dumps): rerun them")
    exponents = [float(e) for e in args.exponents.split(",")]
    heads = " | ".join([*_budget_keys(), "MRR"])
    print(f"| ranking | benchmark | cases | {heads} | R@4000 per language | lines R@B |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    weighted = [(c, recall_at(c, DEFAULT_WEIGHTS)) for c in cases]
    table(weighted, "RankingWeights (fitted on these cases)")
    judged = held_out(cases, args.l2, exponents, args.min_tokens, args.balance)
    for exponent, rows in judged.items():
        table(rows, f"relevance, size^{exponent:g}, held out")
    data = [design(c) for c in cases]
    intercept, coefficients = fit_cases(cases, data, args.l2, args.balance)
    y = np.concatenate([d[1] for d in data])
    print(f"\n{len(y)} candidates, {int(y.sum())} hold a target; fitted on all:\n")
    print(f"intercept={intercept:.4f},")
    print("coefficients={")
    for name, value in zip(FEATURES, coefficients, strict=True):
        print(f'    "{name}": {value:.4f},')
    print("},")
    if args.write:
        model = model_of(intercept, coefficients, exponents[0], args.min_tokens)
        stored = {
            "model": {
                "intercept": model.intercept,
                "coefficients": dict(model.coefficients),
                "size_exponent": model.size_exponent,
                "min_tokens": model.min_tokens,
            },
            "provenance": provenance(cases, args, judged[exponents[0]]),
        }
        with open(args.write, "w") as f:
            f.write(json.dumps(stored, indent=1) + "\n")
        print(f"\nwritten to {args.write}")


def provenance(
    cases: Sequence[dict[str, Any]],
    args: argparse.Namespace,
    judged: Sequence[tuple[dict[str, Any], dict[str, float]]],
) -> dict[str, Any]:
    """What the model was fitted on and how it ranked cases of repositories it was not
    fitted on (each repository's cases by a model fitted without it)."""
    keys = sorted((c["benchmark"], c["repo"], c["commit"], c["targets"]) for c in cases)
    figures: dict[str, float] = {}
    for benchmark in sorted({c["benchmark"] for c, _ in judged}):
        mine = [m for c, m in judged if c["benchmark"] == benchmark]
        lines = [f"lines {k}" for k in _budget_keys() if all(f"lines {k}" in m for m in mine)]
        for metric in (*_budget_keys(), *lines, "MRR"):
            figures[f"{benchmark} {metric}"] = round(statistics.mean(m[metric] for m in mine), 3)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return {
        "fitted_by": "python -m bench.fit_relevance " + " ".join(sys.argv[1:]),
        "commit": commit or "unknown",
        "cases": {
            b: sum(c["benchmark"] == b for c in cases)
            for b in sorted({c["benchmark"] for c in cases})
        },
        "cases_sha256": hashlib.sha256(json.dumps(keys).encode()).hexdigest(),
        "repositories": sorted({c["repo"] for c in cases}),
        "embedder": args.embedder,
        "l2": args.l2,
        "size_exponent": float(args.exponents.split(",")[0]),
        "min_tokens": args.min_tokens,
        "benchmarks_weigh_the_same": args.balance,
        "held_out_by_repository": figures,
    }


if __name__ == "__main__":
    main()

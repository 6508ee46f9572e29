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

The dumps are ``cochange_bench --out`` and ``recall_bench --dump`` files (they name the
files each diff touched).
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from app.retrieval.ranking import DEFAULT_WEIGHTS
from app.retrieval.relevance import FEATURES, RelevanceModel, Touched, features, scored
from bench.fit_ranking import BUDGETS, hits, load, recall_at, recall_of

LANGUAGES = ("python", "go", "typescript")


def design(case: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The case's feature matrix and its labels (1: the candidate holds a target)."""
    touched = Touched.of(case["changed"])
    x = np.array([features(c, touched) for c in case["chunks"]], dtype=float)
    y = np.array([any(hits(c, t) for t in case["targets"]) for c in case["chunks"]], dtype=float)
    return x.reshape(len(case["chunks"]), len(FEATURES)), y


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[float, np.ndarray]:
    """(intercept, coefficients) minimising the log loss plus ``l2`` / 2 * |coefficients|^2
    (the intercept is not penalised)."""
    a = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(a.shape[1])
    penalty = np.full(a.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ w, -35, 35)))
        gradient = a.T @ (p - y) + penalty * w
        hessian = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return float(w[0]), w[1:]


def model_of(intercept: float, coefficients: np.ndarray, exponent: float) -> RelevanceModel:
    named = {n: round(float(c), 4) for n, c in zip(FEATURES, coefficients, strict=True)}
    return RelevanceModel(round(intercept, 4), named, exponent)


def ranked_by(case: dict[str, Any], model: RelevanceModel) -> dict[str, float]:
    return recall_of(case, scored(case["chunks"], case["changed"], model))


def held_out(
    cases: Sequence[dict[str, Any]], l2: float, exponents: Sequence[float]
) -> dict[float, list[tuple[dict[str, Any], dict[str, float]]]]:
    """Per exponent, each case's metrics under a model fitted without its repository."""
    data = [design(c) for c in cases]
    out: dict[float, list[tuple[dict[str, Any], dict[str, float]]]] = defaultdict(list)
    for repo in sorted({c["repo"] for c in cases}):
        train = [d for c, d in zip(cases, data, strict=True) if c["repo"] != repo]
        intercept, coefficients = fit_logistic(
            np.vstack([x for x, _ in train]), np.concatenate([y for _, y in train]), l2
        )
        for case in (c for c in cases if c["repo"] == repo):
            for exponent in exponents:
                model = model_of(intercept, coefficients, exponent)
                out[exponent].append((case, ranked_by(case, model)))
    return out


def table(rows: Sequence[tuple[dict[str, Any], dict[str, float]]], label: str) -> None:
    for benchmark in sorted({c["benchmark"] for c, _ in rows}):
        mine = [(c, m) for c, m in rows if c["benchmark"] == benchmark]
        cells = [statistics.mean(m[k] for _, m in mine) for k in (*_budget_keys(), "MRR")]
        languages = [
            statistics.mean(m["R@4000"] for c, m in mine if c["language"] == lang)
            for lang in LANGUAGES
            if any(c["language"] == lang for c, _ in mine)
        ]
        print(
            f"| {label} | {benchmark} | {len(mine)} | "
            + " | ".join(f"{v:.3f}" for v in cells)
            + " | "
            + " / ".join(f"{v:.2f}" for v in languages)
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
    args = parser.parse_args()
    cases = [c for c in load(args.dumps) if c["benchmark"] != "question"]
    missing = [c["commit"] for c in cases if "changed" not in c]
    if missing:
        raise SystemExit(f"{len(missing)} cases name no touched files (old dumps): rerun them")
    exponents = [float(e) for e in args.exponents.split(",")]
    heads = " | ".join([*_budget_keys(), "MRR"])
    print(f"| ranking | benchmark | cases | {heads} | R@4000 py / go / ts |")
    print("|---|---|---|---|---|---|---|---|---|")
    weighted = [(c, recall_at(c, DEFAULT_WEIGHTS)) for c in cases]
    table(weighted, "RankingWeights (fitted on these cases)")
    for exponent, rows in held_out(cases, args.l2, exponents).items():
        table(rows, f"relevance, size^{exponent:g}, held out")
    data = [design(c) for c in cases]
    x, y = np.vstack([d[0] for d in data]), np.concatenate([d[1] for d in data])
    intercept, coefficients = fit_logistic(x, y, args.l2)
    print(f"\n{len(y)} candidates, {int(y.sum())} hold a target; fitted on all:\n")
    print(f"intercept={intercept:.4f},")
    print("coefficients={")
    for name, value in zip(FEATURES, coefficients, strict=True):
        print(f'    "{name}": {value:.4f},')
    print("},")


if __name__ == "__main__":
    main()

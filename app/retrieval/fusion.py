"""Combining ranked lists from several signals into one score per chunk. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[int]],
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
) -> dict[int, float]:
    """``score(id) = sum over lists of weight / (k + rank)``, rank starting at 1.

    Cormack et al.'s RRF: robust to signals whose raw scores are not comparable.
    """
    scores: dict[int, float] = {}
    for name, ranked in rankings.items():
        weight = (weights or {}).get(name, 1.0)
        for rank, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return scores


def interleave(rankings: Mapping[str, Sequence[int]]) -> dict[int, float]:
    """No fusion: take the lists in turn (first of each, then second, ...); a baseline."""
    scores: dict[int, float] = {}
    lists = [list(r) for _, r in sorted(rankings.items())]
    position = 0
    for depth in range(max((len(r) for r in lists), default=0)):
        for ranked in lists:
            if depth < len(ranked) and ranked[depth] not in scores:
                position += 1
                scores[ranked[depth]] = 1.0 / position
    return scores

"""How likely the reviewer needs a candidate: one calibrated score for every kind of
context (issue 29). Pure.

A logistic model over what is known of a candidate before it is packed: its evidence
(links, history, siblings, the search signals), its kind and size, whether it is a test
or doc, and where it lies against the files the diff touches. The probability is
fitted by ``bench/fit_relevance.py`` on the structural and co-change benchmarks together,
so callees and the code the author forgot compete on one scale. Chunks are ranked by
probability per token: what the budget holds is the most expected help for its size.
"""

from __future__ import annotations

import functools
import math
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from app.retrieval.ranking import ContextChunk

#: The model's inputs, in order (``features``).
FEATURES = (
    "callee",
    "caller",
    "cochange",
    "together",  # log(1 + commits that changed both)
    "sibling",
    "lexical",
    "vector",
    "words",
    "coupled_words",  # words, where history found the chunk too
    "removed",
    "edited",  # share of the changed lines' names it uses (``edited_names``)
    "replaced",  # share of the names the change removed that it still uses
    "found_for",  # log(changed functions that found it)
    "secondary",  # a test, doc, example or config file
    "same_directory",  # in the directory of a file the diff touches
    "path_words",  # its path's words shared with a touched file's (Jaccard, the best)
    "size",  # log(estimated tokens shown: an excerpt's, when it has one)
    "function",
    "method",
    "class",
    "window",
)
#: Chunks smaller than this cost about as much as this: a one-line getter is not worth
#: ten times a ten-line function of the same probability.
MIN_TOKENS = 30
_PATH_WORD = re.compile(r"[a-z0-9]+")
#: Folder and file names every project has; they say nothing about nearness.
_GENERIC_PATH_WORDS = frozenset({"src", "lib", "pkg", "packages", "internal", "index", "init"})


@functools.lru_cache(maxsize=4096)
def path_words(path: str) -> frozenset[str]:
    """The words of a path without its extension: ``src/_client.py`` -> {``client``}."""
    stem = posixpath.splitext(path.lower())[0]
    return frozenset(_PATH_WORD.findall(stem)) - _GENERIC_PATH_WORDS


@dataclass(frozen=True)
class Touched:
    """The files a diff touches, as the path features need them."""

    directories: frozenset[str]
    words: tuple[frozenset[str], ...]

    @classmethod
    def of(cls, paths: Iterable[str]) -> Touched:
        unique = sorted(set(paths))
        return cls(
            frozenset(posixpath.dirname(p) for p in unique),
            tuple(path_words(p) for p in unique),
        )


def features(chunk: ContextChunk, touched: Touched) -> tuple[float, ...]:
    """``FEATURES`` of one candidate."""
    e = chunk.evidence
    own = path_words(chunk.file_path)
    shared = max((len(own & w) / len(own | w) for w in touched.words if own | w), default=0.0)
    kind = chunk.chunk_type
    return (
        e.callee,
        e.caller,
        e.cochange,
        math.log1p(e.together),
        e.sibling,
        e.lexical,
        e.vector,
        e.words,
        e.words if e.cochange > 0 else 0.0,
        e.removed,
        e.edited,
        e.replaced,
        math.log(max(e.found_for, 1)),
        float(chunk.secondary),
        float(posixpath.dirname(chunk.file_path) in touched.directories),
        shared,
        math.log(max(chunk.shown_tokens, 1)),
        float(kind == "function"),
        float(kind == "method"),
        float(kind == "class"),
        float(kind == "window"),
    )


@dataclass(frozen=True)
class RelevanceModel:
    """P(the reviewer needs the chunk) = 1 / (1 + exp(-(intercept + coefficients .
    features))); ranked by that per token raised to ``size_exponent``."""

    intercept: float
    coefficients: Mapping[str, float]
    size_exponent: float = 1.0

    def probability(self, chunk: ContextChunk, touched: Touched) -> float:
        x = features(chunk, touched)
        z = self.intercept + sum(
            self.coefficients.get(n, 0.0) * v for n, v in zip(FEATURES, x, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def rank_score(self, probability: float, chunk: ContextChunk) -> float:
        """Probability per hundred tokens (to the ``size_exponent``)."""
        tokens = max(chunk.shown_tokens, MIN_TOKENS)
        return probability / (tokens / 100) ** self.size_exponent


def scored(
    chunks: Sequence[ContextChunk], touched_paths: Iterable[str], model: RelevanceModel
) -> list[ContextChunk]:
    """``chunks`` with their relevance and the score they are ranked by."""
    touched = Touched.of(touched_paths)
    out = []
    for chunk in chunks:
        p = model.probability(chunk, touched)
        out.append(replace(chunk, relevance=p, score=model.rank_score(p, chunk)))
    return out


#: Fitted on 180 co-change and 150 structural cases of 12 repositories (hash embedder):
#: ``python -m bench.fit_relevance`` on their dumps, size exponent 1, L2 0.33, with
#: look-alikes shown as excerpts (``excerpts``: ``size`` is the size shown). Held out by
#: repository it ranks co-change R@4000 0.751 (0.663 with every chunk shown whole and the
#: old per-file cap) and structural 0.899 (0.869); bench/RESULTS.md. Once the rest is
#: known, the number of commits and a sibling link weigh slightly against.
DIFF_RELEVANCE = RelevanceModel(
    intercept=-9.1357,
    coefficients={
        "callee": 3.0946,
        "caller": 1.9810,
        "cochange": 0.6723,
        "together": -0.4873,
        "sibling": -0.4252,
        "lexical": 0.3332,
        "vector": 1.0152,
        "words": 1.4252,
        "coupled_words": -0.0279,
        "removed": 0.2108,
        "edited": 2.5377,
        "replaced": 1.0716,
        "found_for": 0.0505,
        "secondary": -5.6357,
        "same_directory": 0.2402,
        "path_words": -1.6831,
        "size": 0.1641,
        "function": 3.3153,
        "method": 3.5153,
        "class": 2.5034,
        "window": 4.5071,
    },
    size_exponent=1.0,
)

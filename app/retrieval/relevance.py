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
import json
import math
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import resources

from app.db.chunk_types import ChunkType
from app.retrieval.context_chunk import ContextChunk

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
        float(kind == ChunkType.FUNCTION),
        float(kind == ChunkType.METHOD),
        float(kind == ChunkType.CLASS),
        float(kind == ChunkType.WINDOW),
    )


@dataclass(frozen=True)
class RelevanceModel:
    """P(the reviewer needs the chunk) = 1 / (1 + exp(-(intercept + coefficients .
    features))); ranked by that per token raised to ``size_exponent``."""

    intercept: float
    coefficients: Mapping[str, float]
    size_exponent: float = 1.0
    #: a chunk smaller than this costs as much as this in its rank
    min_tokens: int = MIN_TOKENS

    def probability(self, chunk: ContextChunk, touched: Touched) -> float:
        x = features(chunk, touched)
        z = self.intercept + sum(
            self.coefficients.get(n, 0.0) * v for n, v in zip(FEATURES, x, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def rank_score(self, probability: float, chunk: ContextChunk) -> float:
        """Probability per hundred tokens (to the ``size_exponent``). An excerpt is priced
        between what it shows and its whole code (their geometric mean): it is a pointer
        into a longer definition that the reviewer may have to read whole, and the lines
        it returns span the code it leaves out between the lines it shows."""
        shown = max(chunk.shown_tokens, self.min_tokens)
        tokens = math.sqrt(shown * max(chunk.whole_tokens, shown))
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


def load_model(data: Mapping[str, object]) -> RelevanceModel:
    """A model as ``bench/fit_relevance.py --write`` stores it (``model``; its
    ``provenance`` says what it was fitted on and how it did on code it never saw)."""
    model = data.get("model")
    if not isinstance(model, Mapping):
        raise ValueError("a relevance model file needs a 'model' object")
    coefficients = {str(k): float(v) for k, v in model["coefficients"].items()}
    unknown = set(coefficients) - set(FEATURES)
    if unknown:
        raise ValueError(f"the relevance model names unknown features: {sorted(unknown)}")
    return RelevanceModel(
        float(model["intercept"]),
        coefficients,
        float(model.get("size_exponent", 1.0)),
        int(model.get("min_tokens", MIN_TOKENS)),
    )


#: The fitted model, with its provenance beside it (``relevance_model.json``).
DIFF_RELEVANCE = load_model(
    json.loads(resources.files("app.retrieval").joinpath("relevance_model.json").read_text())
)

"""A weighted sum of the evidence (``RankingWeights``): how a question's search signals
are fused (``QUESTION_WEIGHTS``), and what the benchmarks rank a signal alone by. A
diff's context is ranked by the relevance model instead (``relevance.py``). Pure."""

from __future__ import annotations

from dataclasses import dataclass

from app.db.chunk_types import ChunkType
from app.retrieval.evidence import Evidence


@dataclass(frozen=True, kw_only=True)
class RankingWeights:
    """Each signal's weight; the defaults, fitted by grid search on benchmark cases
    (``bench/fit_ranking.py``), ranked a diff's context before the relevance model and
    stay the benchmarks' reference."""

    link: float = 1.0
    cochange: float = 0.2
    sibling: float = 0.3
    lexical: float = 0.2
    vector: float = 0.15
    #: the words signal on its own a little, and where history also found the chunk
    #: much more: it says which function of a co-changing file shares the change's names
    words: float = 0.1
    coupled_words: float = 0.6
    removed: float = 0.05
    shared: float = 0.0  # for each further changed function that found the chunk

    def score(self, e: Evidence) -> float:
        return (
            self.link * e.link
            + self.cochange * e.cochange
            + self.sibling * e.sibling
            + self.lexical * e.lexical
            + self.vector * e.vector
            + (self.words + (self.coupled_words if e.cochange > 0 else 0.0)) * e.words
            + self.removed * e.removed
            + self.shared * (min(e.found_for, 5) - 1)
        )


#: A question asked in a PR has only the search signals (fitted by ``bench/fit_ranking.py
#: --question`` on ``bench/question_bench.py``): the words of the chunks' code say most;
#: the hash embedder's vectors say little, and their weight is kept higher than its fit
#: for semantic embedders (bench/RESULTS.md, "Question to code").
QUESTION_WEIGHTS = RankingWeights(lexical=1.0, vector=0.4, words=2.0)
#: A question's answers are often several functions of one file: its look-alikes are
#: capped per file far higher than a review's (bench/RESULTS.md, "Question to code").
QUESTION_MAX_PER_FILE = 10
#: Candidates each search signal gives a question, at least: tests and docs take about two
#: in three of a question's word matches and rank after code, and a shallower list left
#: answers out (bench/RESULTS.md, "Question to code: answers before outlines").
QUESTION_DEPTH = 200
#: A question is answered by a definition's code. A class's outline (its fields and its
#: methods' signatures) holds the words of every method and a file's top-level lines the
#: words of its imports, so they match a question as often as the method it is about: they
#: point to where the answer is and weigh this much of their score.
OUTLINE_WEIGHT = 0.5
_OUTLINES = frozenset({ChunkType.CLASS, ChunkType.MODULE})


def question_score(weights: RankingWeights, evidence: Evidence, chunk_type: str) -> float:
    """A question's candidate's score: its evidence by ``weights``, an outline's
    (``OUTLINE_WEIGHT``) discounted. Pure."""
    score = weights.score(evidence)
    return score * OUTLINE_WEIGHT if chunk_type in _OUTLINES else score

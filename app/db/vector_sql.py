"""How vectors are written into SQL and compared there: what search statements need."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from app.db.models import EMBEDDING_DIMS

#: How vectors are stored, indexed and compared: float16 (migration 0007 says why).
SEARCH_TYPE = f"halfvec({EMBEDDING_DIMS})"
#: Significant digits a query vector is sent with: float16, which it is cast to, holds
#: about 3.3, so 6 change nothing.
QUERY_DIGITS = 6


def cosine_distance(column: str, query: str) -> str:
    """SQL: the cosine distance the indexes serve, between a column and a query vector."""
    return f"({column} <=> ({query})::{SEARCH_TYPE})"


@functools.cache
def _vector_format(dims: int) -> str:
    return "[" + ",".join([f"%.{QUERY_DIGITS}g"] * dims) + "]"


def vector_text(values: Sequence[float]) -> str:
    """A query vector as pgvector text, at ``QUERY_DIGITS`` significant digits, in one
    %-format (a third of the time of ``pgvector.Vector.to_text``, at half the length:
    bench/RESULTS.md). Pure."""
    return _vector_format(len(values)) % tuple(values)

"""How vectors are written into SQL and compared there: what search statements need.

Vectors are stored as float16 (``halfvec``, migration 0007 says why) at their model's own
width (migration 0019): the column has no width, so a statement casts both sides to the
width it searches at, and keeps to the rows of that width (``of_width``). A repository's
ivfflat index is built over the same cast (``app/db/vector_index.py``), so the planner
matches the search's expression to the index's.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

#: Significant digits a query vector is sent with: float16, which it is cast to, holds
#: about 3.3, so 6 change nothing.
QUERY_DIGITS = 6


def search_type(width: int) -> str:
    """The SQL type vectors of ``width`` dimensions are compared as."""
    return f"halfvec({int(width)})"


def at_width(column: str, width: int) -> str:
    """SQL: ``column`` as a vector of ``width`` dimensions (an index's expression)."""
    return f"(({column})::{search_type(width)})"


def of_width(column: str, width: int) -> str:
    """SQL: ``column`` holds a vector of ``width`` dimensions (an index's predicate)."""
    return f"vector_dims({column}) = {int(width)}"


def cosine_distance(column: str, query: str, width: int) -> str:
    """SQL: the cosine distance the indexes serve, between a column and a query vector,
    both at ``width`` dimensions."""
    return f"({at_width(column, width)} <=> ({query})::{search_type(width)})"


@functools.cache
def _vector_format(dims: int) -> str:
    return "[" + ",".join([f"%.{QUERY_DIGITS}g"] * dims) + "]"


def vector_text(values: Sequence[float]) -> str:
    """A query vector as pgvector text, at ``QUERY_DIGITS`` significant digits, in one
    %-format (a third of the time of ``pgvector.Vector.to_text``, at half the length:
    bench/RESULTS.md). Pure."""
    return _vector_format(len(values)) % tuple(values)

"""Splitting identifiers into words: what summaries, the hash embedder, the full-text
column and retrieval queries all match on."""

from __future__ import annotations

import functools
import re

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


@functools.lru_cache(maxsize=1 << 16)
def split_identifier(identifier: str) -> tuple[str, ...]:
    """``parseHTTPResponse_v2`` -> ``("parse", "http", "response", "v", "2")``. Cached: an
    index splits the same names millions of times."""
    return tuple(w.lower() for w in _WORD.findall(identifier))


#: Built-in type names some grammars report as type identifiers; they link nothing.
IGNORED_REFERENCES = frozenset(
    "any bool boolean byte char complex64 complex128 error float float32 float64 int int8 int16"
    " int32 int64 never null number object rune self Self str string super uint uint8 uint16"
    " uint32 uint64 uintptr unknown usize isize void".split()
)

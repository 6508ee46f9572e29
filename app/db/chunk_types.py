"""The kinds of chunk the index stores, in a module of its own: the chunker imports it, and
must not pull in the database's models to do so."""

from __future__ import annotations

from enum import StrEnum


class ChunkType(StrEnum):
    """What a chunk of code is (``code_chunks.chunk_type``): a definition, a module's
    top-level code, or a window of a long definition under its signature."""

    FUNCTION = "function"
    METHOD = "method"
    CLASS = "class"
    MODULE = "module"
    WINDOW = "window"

"""The words of a chunk's code, as PostgreSQL computes them: what the ``words`` signal
(BM25 over code, ``app/retrieval/full_text.py``) matches a changed function's code with.

One SQL expression makes the stored column (``code_chunks.code_tsv``, migration 0020)
and the queries' words from a changed function's code, so the two cannot drift apart.
Each identifier counts whole (``get_flashed_messages`` and ``getFlashedMessages`` both
as ``getflashedmessages``) and by its words (``get``, ``flashed``, ``messages``): a
whole name is rare and says the most, its words link it to related names. Everything
that is not a letter or digit separates words, so strings and comments count too.
"""

from __future__ import annotations

#: Characters of a chunk read for its words: a tsvector holds at most 1 MB, and a chunk
#: this long is generated or minified code, not something to match on.
CODE_WORDS_CHARS = 100_000


def code_words_sql(code: str) -> str:
    """The tsvector of the code in SQL expression ``code``: whole identifiers (their
    underscores removed) then their camelCase and snake_case parts, lower-cased by the
    ``simple`` configuration. Immutable, so it can make a stored generated column."""
    head = f"left({code}, {CODE_WORDS_CHARS})"
    whole = f"translate(regexp_replace({head}, '[^A-Za-z0-9_]+', ' ', 'g'), '_', '')"
    split = f"regexp_replace({head}, '([a-z0-9])([A-Z])|([A-Z])([A-Z][a-z])', '\\1\\3 \\2\\4', 'g')"
    parts = f"regexp_replace({split}, '[^A-Za-z0-9]+', ' ', 'g')"
    return f"to_tsvector('simple'::regconfig, {whole} || ' ' || {parts})"

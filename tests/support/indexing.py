"""Indexing a tree in a test: ``index_tree`` is the one way tests run the indexer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from app.config import Settings
from app.indexing.embedder import Embedder, HashEmbedder, select_embedder
from app.indexing.indexer import Indexer
from app.indexing.report import IndexOptions, IndexReport
from app.indexing.source_tree import FileSource
from app.indexing.summarizer import select_summarizer


def index_tree(
    engine: Engine,
    root: Path | FileSource,
    repo: str = "shop",
    *,
    settings: Settings | None = None,
    embedder: Embedder | None = None,
    **options: Any,
) -> IndexReport:
    """Index ``root`` as ``repo`` with ``IndexOptions(**options)``: with ``settings``,
    their embedder and summarizer (a fake model server's, say); else ``embedder``, by
    default the hash embedder, and no summarizer."""
    if settings is not None:
        embedder = embedder or select_embedder(settings)
    summarizer = select_summarizer(settings) if settings is not None else None
    return Indexer(
        engine,
        repo,
        root,
        embedder=embedder or HashEmbedder(),
        summarizer=summarizer,
        options=IndexOptions(**options),
    ).run()

"""The repository index: repositories, their files, chunks, links, history, word counts
and the summary and embedding caches."""

from __future__ import annotations

from datetime import datetime

from pgvector.sqlalchemy import HALFVEC, Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Computed,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
)
from sqlalchemy.dialects.postgresql import ARRAY, TSVECTOR
from sqlalchemy.orm import Mapped, mapped_column

from app.db.code_words import code_words_sql
from app.db.models.base import CHUNK_TYPES, Base, created_column


class Repository(Base):
    """A repository the bot indexes: ``owner/name`` from GitHub, or a local name."""

    __tablename__ = "repositories"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    full_name: Mapped[str] = mapped_column(String(255), unique=True)
    installation_id: Mapped[int | None] = mapped_column(BigInteger)
    default_branch: Mapped[str | None] = mapped_column(String(255))
    last_indexed_commit: Mapped[str | None] = mapped_column(String(64))
    # the chunk count its words were counted at (repository_words; 0: not counted)
    words_counted_at: Mapped[int] = mapped_column(Integer, server_default="0")
    # for BM25 (app/retrieval/full_text.py): chunks, and their average distinct words
    search_chunks: Mapped[int] = mapped_column(Integer, server_default="0")
    search_avg_words: Mapped[float] = mapped_column(Float, server_default="0")
    # the same for the words of their code (code_tsv; migration 0020)
    code_avg_words: Mapped[float] = mapped_column(Float, server_default="0")
    # embedded chunks at which a vector index was built and did no better than a scan
    # (app/db/vector_index.py; 0: never): searched exactly until it doubles
    vector_index_declined_rows: Mapped[int] = mapped_column(Integer, server_default="0")
    # the newest commit whose history is in history_commits (app/indexing/history.py)
    history_commit: Mapped[str | None] = mapped_column(String(64))
    # chunks were stored without their summaries and vectors, which a background job is
    # making (app/flows/enrich.py): retrieval leaves the vector signal out until it is done
    enrich_pending: Mapped[bool] = mapped_column(Boolean, server_default=false())
    created_at: Mapped[datetime] = created_column()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now(), nullable=False
    )


class RepositoryCodeWord(Base):
    """A word of code in more than ``STORED_MIN`` of a repository's chunks, and how many
    (``code_tsv``; app/db/word_counts.py): the ``words`` signal leaves out the commonest."""

    __tablename__ = "repository_code_words"

    repository_id: Mapped[int] = mapped_column(
        ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True
    )
    word: Mapped[str] = mapped_column(Text, primary_key=True)
    chunks: Mapped[int] = mapped_column(Integer)


class RepositoryWord(Base):
    """A word in more than ``STORED_MIN`` of a repository's chunks, and how many
    (app/db/word_counts.py): full-text queries keep their rarer words by it."""

    __tablename__ = "repository_words"

    repository_id: Mapped[int] = mapped_column(
        ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True
    )
    word: Mapped[str] = mapped_column(Text, primary_key=True)
    chunks: Mapped[int] = mapped_column(Integer)


class SourceFile(Base):
    """One indexed file of a repository, as of its last indexing."""

    __tablename__ = "source_files"
    __table_args__ = (UniqueConstraint("repository_id", "path"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    repository_id: Mapped[int] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"))
    path: Mapped[str] = mapped_column(Text)
    content_hash: Mapped[str] = mapped_column(String(64))
    language: Mapped[str | None] = mapped_column(String(32))
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    mtime_ns: Mapped[int | None] = mapped_column(BigInteger)
    decoded_leniently: Mapped[bool] = mapped_column(server_default="false")
    link_version: Mapped[int] = mapped_column(Integer, server_default="0")
    indexed_at: Mapped[datetime] = created_column()


class ChunkLink(Base):
    """A name used on one line of a file, and where its definition is (app/indexing/links.py)."""

    __tablename__ = "chunk_links"
    __table_args__ = (
        Index("ix_chunk_links_repository_id_name", "repository_id", "name"),
        Index("ix_chunk_links_source_file_id", "source_file_id"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    repository_id: Mapped[int] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"))
    source_file_id: Mapped[int] = mapped_column(ForeignKey("source_files.id", ondelete="CASCADE"))
    file_path: Mapped[str] = mapped_column(Text)
    line: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(Text)
    match: Mapped[str] = mapped_column(String(16))
    target: Mapped[str | None] = mapped_column(Text)
    qualifier: Mapped[str | None] = mapped_column(Text)
    confidence: Mapped[float] = mapped_column(Float)
    kind: Mapped[str] = mapped_column(String(16), server_default="use")  # Link.kind


class HistoryCommit(Base):
    """A commit of the default branch's first-parent line, as the co-change signal
    weighs it: when, and how many functions it changed."""

    __tablename__ = "history_commits"
    __table_args__ = (
        UniqueConstraint("repository_id", "sha"),
        Index("ix_history_commits_repository_id_committed_at", "repository_id", "committed_at"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    repository_id: Mapped[int] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"))
    sha: Mapped[str] = mapped_column(String(64))
    committed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    symbols: Mapped[int] = mapped_column(Integer)
    #: how much the commit counts (recency, and fewer definitions changed: more)
    weight: Mapped[float] = mapped_column(Float)


class HistoryChange(Base):
    """A file a history commit changed (``qualified_name`` ''), or a definition in it."""

    __tablename__ = "history_changes"
    __table_args__ = (
        Index(
            "ix_history_changes_repository_id_file_path_qualified_name",
            "repository_id",
            "file_path",
            "qualified_name",
        ),
        Index("ix_history_changes_commit_id", "commit_id"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    commit_id: Mapped[int] = mapped_column(ForeignKey("history_commits.id", ondelete="CASCADE"))
    repository_id: Mapped[int] = mapped_column(BigInteger)
    file_path: Mapped[str] = mapped_column(Text)
    qualified_name: Mapped[str] = mapped_column(Text)


class HistorySymbol(Base):
    """A file ('' name) or definition's summed commit weight and commit count, over the
    history kept: what the co-change score divides by."""

    __tablename__ = "history_symbols"

    repository_id: Mapped[int] = mapped_column(
        ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True
    )
    file_path: Mapped[str] = mapped_column(Text, primary_key=True)
    qualified_name: Mapped[str] = mapped_column(Text, primary_key=True)
    weight: Mapped[float] = mapped_column(Float)
    commits: Mapped[int] = mapped_column(Integer)


class CodeChunk(Base):
    """A function, method, class, module part or line window, with its summary and vector."""

    __tablename__ = "code_chunks"
    __table_args__ = (
        CheckConstraint(
            "chunk_type IN (" + ", ".join(f"'{t}'" for t in CHUNK_TYPES) + ")", name="chunk_type"
        ),
        CheckConstraint("start_line >= 1 AND end_line >= start_line", name="line_range"),
        Index("ix_code_chunks_repository_id_file_path", "repository_id", "file_path"),
        Index("ix_code_chunks_source_file_id", "source_file_id"),
        Index("ix_code_chunks_references", "references", postgresql_using="gin"),
        # full text within one repository (btree_gin: migration 0014)
        Index(
            "ix_code_chunks_repository_id_search_tsv",
            "repository_id",
            "search_tsv",
            postgresql_using="gin",
        ),
        Index(
            "ix_code_chunks_repository_id_code_tsv",
            "repository_id",
            "code_tsv",
            postgresql_using="gin",
        ),
        Index("ix_code_chunks_repository_id_content_hash", "repository_id", "content_hash"),
        Index("ix_code_chunks_repository_id_symbol_name", "repository_id", "symbol_name"),
        # Vector indexes are per repository, made by app.db.vector_index, not here.
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    repository_id: Mapped[int] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"))
    source_file_id: Mapped[int] = mapped_column(ForeignKey("source_files.id", ondelete="CASCADE"))
    file_path: Mapped[str] = mapped_column(Text)
    start_line: Mapped[int] = mapped_column(Integer)
    end_line: Mapped[int] = mapped_column(Integer)
    #: a chunk of several stretches of lines (a class skeleton, or a window of one): their
    #: first and last lines, flat (``store.flat_segments``); NULL for one stretch
    segments: Mapped[list[int] | None] = mapped_column(ARRAY(Integer), nullable=True)
    symbol_name: Mapped[str | None] = mapped_column(Text)
    qualified_name: Mapped[str | None] = mapped_column(Text)
    chunk_type: Mapped[str] = mapped_column(String(16))
    language: Mapped[str | None] = mapped_column(String(32))
    raw_code: Mapped[str] = mapped_column(Text)
    signature: Mapped[str | None] = mapped_column(Text)
    docstring: Mapped[str | None] = mapped_column(Text)
    references: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default="{}")
    content_hash: Mapped[str] = mapped_column(String(64))
    nl_summary: Mapped[str | None] = mapped_column(Text)
    summarizer: Mapped[str | None] = mapped_column(String(16))
    summary_model: Mapped[str | None] = mapped_column(String(128))
    #: float16 (halfvec), kept in the row (STORAGE MAIN) rather than TOASTed: an exact
    #: scan reads it with the row, and the ivfflat indexes hold half the bytes. At its
    #: model's own width, at most EMBEDDING_DIMS (migration 0019; ``app/db/vector_sql.py``).
    embedding = mapped_column(HALFVEC(), nullable=True)
    embedding_model: Mapped[str | None] = mapped_column(String(128))
    token_count: Mapped[int] = mapped_column(Integer, server_default="0")
    #: identifier words, references and summary, for PostgreSQL full-text search; its
    #: tsvector is kept in the row (STORAGE MAIN, migration 0011), not in TOAST
    search_text: Mapped[str | None] = mapped_column(Text)
    search_tsv = mapped_column(
        TSVECTOR,
        Computed("to_tsvector('simple'::regconfig, coalesce(search_text, ''))", persisted=True),
    )
    #: the words of the code (``app/db/code_words.py``), for BM25 over code
    code_tsv = mapped_column(TSVECTOR, Computed(code_words_sql("raw_code"), persisted=True))
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now(), nullable=False
    )


class SummaryCache(Base):
    """A summary per (chunk content hash, summarizer model): identical code is summarised once."""

    __tablename__ = "summary_cache"

    content_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    model: Mapped[str] = mapped_column(String(128), primary_key=True)
    summarizer: Mapped[str] = mapped_column(String(16))
    summary: Mapped[str] = mapped_column(Text)
    prompt_tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    completion_tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    created_at: Mapped[datetime] = created_column()


class EmbeddingCache(Base):
    """A vector per (embedded text hash, embedding model): identical text is embedded once."""

    __tablename__ = "embedding_cache"

    text_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    model: Mapped[str] = mapped_column(String(128), primary_key=True)
    embedding = mapped_column(Vector(), nullable=False)  # at its model's width
    dims: Mapped[int] = mapped_column(Integer)
    tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    created_at: Mapped[datetime] = created_column()

"""The tables. Alembic migrations create them; a drift test keeps the two in step."""

from __future__ import annotations

from datetime import date, datetime

from pgvector.sqlalchemy import HALFVEC, Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Computed,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from app.config import EMBEDDING_DIMS

CHUNK_TYPES = ("function", "method", "class", "module", "window")

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def _created() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), server_default=func.now(), nullable=False)


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
    # for BM25 (app/retrieval/signals.py): chunks, and their average distinct words
    search_chunks: Mapped[int] = mapped_column(Integer, server_default="0")
    search_avg_words: Mapped[float] = mapped_column(Float, server_default="0")
    # embedded chunks at which a vector index was built and did no better than a scan
    # (app/db/vector_index.py; 0: never): searched exactly until it doubles
    vector_index_declined_rows: Mapped[int] = mapped_column(Integer, server_default="0")
    # the newest commit whose history is in history_commits (app/indexing/history.py)
    history_commit: Mapped[str | None] = mapped_column(String(64))
    # chunks were stored without their summaries and vectors, which a background job is
    # making (app/flows/enrich.py): retrieval leaves the vector signal out until it is done
    enrich_pending: Mapped[bool] = mapped_column(Boolean, server_default=false())
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now(), nullable=False
    )


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
    indexed_at: Mapped[datetime] = _created()


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
    kind: Mapped[str] = mapped_column(String(8), server_default="use")  # use|type|import


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
    #: scan reads it with the row, and the ivfflat indexes hold half the bytes.
    embedding = mapped_column(HALFVEC(EMBEDDING_DIMS), nullable=True)
    embedding_model: Mapped[str | None] = mapped_column(String(128))
    token_count: Mapped[int] = mapped_column(Integer, server_default="0")
    #: identifier words, references and summary, for PostgreSQL full-text search; its
    #: tsvector is kept in the row (STORAGE MAIN, migration 0011), not in TOAST
    search_text: Mapped[str | None] = mapped_column(Text)
    search_tsv = mapped_column(
        TSVECTOR,
        Computed("to_tsvector('simple'::regconfig, coalesce(search_text, ''))", persisted=True),
    )
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
    created_at: Mapped[datetime] = _created()


class EmbeddingCache(Base):
    """A vector per (embedded text hash, embedding model): identical text is embedded once."""

    __tablename__ = "embedding_cache"

    text_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    model: Mapped[str] = mapped_column(String(128), primary_key=True)
    embedding = mapped_column(Vector(EMBEDDING_DIMS), nullable=False)
    dims: Mapped[int] = mapped_column(Integer)
    tokens: Mapped[int] = mapped_column(Integer, server_default="0")
    created_at: Mapped[datetime] = _created()


class WebhookDelivery(Base):
    """Every GitHub delivery id seen, so a redelivery is acknowledged and not processed twice."""

    __tablename__ = "webhook_deliveries"

    delivery_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    event: Mapped[str] = mapped_column(String(64))
    action: Mapped[str | None] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(32), server_default="received")
    repository_full_name: Mapped[str | None] = mapped_column(String(255))
    installation_id: Mapped[int | None] = mapped_column(BigInteger)
    received_at: Mapped[datetime] = _created()
    processed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Review(Base):
    """One review per (repository, PR, head SHA): intent is recorded before posting."""

    __tablename__ = "reviews"
    __table_args__ = (
        UniqueConstraint("repository_id", "pr_number", "head_sha"),
        Index("ix_reviews_created_at", "created_at"),
        Index("ix_reviews_repository_id_id", "repository_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    repository_id: Mapped[int] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"))
    pr_number: Mapped[int] = mapped_column(Integer)
    base_sha: Mapped[str] = mapped_column(String(64))
    head_sha: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(32), server_default="pending")
    github_review_id: Mapped[int | None] = mapped_column(BigInteger)
    comment_fingerprints: Mapped[list[str]] = mapped_column(ARRAY(String(64)), server_default="{}")
    comment_count: Mapped[int] = mapped_column(Integer, server_default="0")
    model: Mapped[str | None] = mapped_column(String(128))
    prompt_tokens: Mapped[int] = mapped_column(BigInteger, server_default="0")
    completion_tokens: Mapped[int] = mapped_column(BigInteger, server_default="0")
    created_at: Mapped[datetime] = _created()  # the first attempt's claim: latency starts here
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now(), nullable=False
    )
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Conversation(Base):
    """A question to the bot on a PR (``/ask``, or a reply to one of its inline comments)
    and its answer: the record that makes answering idempotent and rate-limited."""

    __tablename__ = "conversations"
    __table_args__ = (
        UniqueConstraint("repository_id", "kind", "question_id"),
        Index(
            "ix_conversations_repository_id_pr_number_created_at",
            "repository_id",
            "pr_number",
            "created_at",
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    repository_id: Mapped[int] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"))
    pr_number: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))  # ask | reply
    question_id: Mapped[int] = mapped_column(BigInteger)  # the asking comment's GitHub id
    status: Mapped[str] = mapped_column(String(16))  # answering | answered | limited
    answer_id: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = _created()


class ReviewFeedback(Base):
    """What people did with one of the bot's inline comments, read when its PR closed:
    reactions and whether the thread was resolved (``app/review/feedback.py``)."""

    __tablename__ = "review_feedback"
    __table_args__ = (
        UniqueConstraint("repository_id", "comment_id"),
        Index("ix_review_feedback_repository_id_verdict", "repository_id", "verdict"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    repository_id: Mapped[int] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"))
    pr_number: Mapped[int] = mapped_column(Integer)
    comment_id: Mapped[int] = mapped_column(BigInteger)
    fingerprint: Mapped[str] = mapped_column(String(64))
    title_key: Mapped[str] = mapped_column(Text)
    path: Mapped[str] = mapped_column(Text)
    thumbs_up: Mapped[int] = mapped_column(Integer)
    thumbs_down: Mapped[int] = mapped_column(Integer)
    resolved: Mapped[bool] = mapped_column(Boolean)
    verdict: Mapped[str] = mapped_column(String(16))  # accepted | rejected | none
    recorded_at: Mapped[datetime] = _created()


class IndexRun(Base):
    """One indexing run: what it saw, changed and cost (calls and tokens)."""

    __tablename__ = "index_runs"
    __table_args__ = (
        Index("ix_index_runs_repository_id_started_at", "repository_id", "started_at"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    repository_id: Mapped[int] = mapped_column(ForeignKey("repositories.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16), server_default="running")
    full: Mapped[bool] = mapped_column(server_default="false")
    commit_sha: Mapped[str | None] = mapped_column(String(64))
    summary_model: Mapped[str | None] = mapped_column(String(128))
    embedding_model: Mapped[str | None] = mapped_column(String(128))
    stats: Mapped[dict[str, object]] = mapped_column(JSONB, server_default="{}")
    summary_calls: Mapped[int] = mapped_column(Integer, server_default="0")
    summary_prompt_tokens: Mapped[int] = mapped_column(BigInteger, server_default="0")
    summary_completion_tokens: Mapped[int] = mapped_column(BigInteger, server_default="0")
    embedding_calls: Mapped[int] = mapped_column(Integer, server_default="0")
    embedding_tokens: Mapped[int] = mapped_column(BigInteger, server_default="0")
    wall_seconds: Mapped[float | None] = mapped_column()
    error: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime] = _created()
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class JobError(Base):
    """Why a job run failed: the message an operator sees in ``GET /reindex/{id}``."""

    __tablename__ = "job_errors"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    job_id: Mapped[int] = mapped_column(BigInteger, index=True)
    task: Mapped[str] = mapped_column(String(128))
    attempt: Mapped[int] = mapped_column(Integer)
    transient: Mapped[bool] = mapped_column(Boolean)
    error: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = _created()


class ModelUsage(Base):
    """Model calls and tokens per day, repository, purpose (review, answer, summary,
    embedding) and model: what the dashboard's spend chart adds up."""

    __tablename__ = "model_usage"
    __table_args__ = (Index("ix_model_usage_day", "day"),)

    day: Mapped[date] = mapped_column(Date, primary_key=True)
    repository_id: Mapped[int] = mapped_column(
        ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True
    )
    purpose: Mapped[str] = mapped_column(String(16), primary_key=True)
    model: Mapped[str] = mapped_column(String(128), primary_key=True)
    calls: Mapped[int] = mapped_column(BigInteger, server_default="0")
    input_tokens: Mapped[int] = mapped_column(BigInteger, server_default="0")
    output_tokens: Mapped[int] = mapped_column(BigInteger, server_default="0")


class PrUsage(Base):
    """Model tokens spent on one pull request (reviews, answers, descriptions), and the
    budget note last posted on it (``kind:period``), so it is posted once."""

    __tablename__ = "pr_usage"

    repository_id: Mapped[int] = mapped_column(
        ForeignKey("repositories.id", ondelete="CASCADE"), primary_key=True
    )
    pr_number: Mapped[int] = mapped_column(Integer, primary_key=True)
    tokens: Mapped[int] = mapped_column(BigInteger, server_default="0")
    budget_note: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), nullable=False
    )


class AdminSession(Base):
    """A dashboard sign-in. Only the SHA-256 of the session token is kept, so the table
    holds nothing a reader could sign in with."""

    __tablename__ = "admin_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = _created()
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AdminSignInFailure(Base):
    """A wrong admin token given to the sign-in form: what rate-limits guessing."""

    __tablename__ = "admin_sign_in_failures"
    __table_args__ = (Index("ix_admin_sign_in_failures_client_failed_at", "client", "failed_at"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    client: Mapped[str] = mapped_column(String(64))
    failed_at: Mapped[datetime] = _created()

"""What the bot did and was asked: webhook deliveries, reviews, conversations, feedback,
index runs, job errors, model usage, and the dashboard's sessions."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, created_column


class WebhookDelivery(Base):
    """Every GitHub delivery id seen, so a redelivery is acknowledged and not processed twice."""

    __tablename__ = "webhook_deliveries"

    delivery_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    event: Mapped[str] = mapped_column(String(64))
    action: Mapped[str | None] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(32), server_default="received")
    repository_full_name: Mapped[str | None] = mapped_column(String(255))
    installation_id: Mapped[int | None] = mapped_column(BigInteger)
    received_at: Mapped[datetime] = created_column()
    processed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class RedeliveryWatermark(Base):
    """How far back the redelivery pass has read a hook's delivery log (GitHub's attempt
    id): the next pass reads back to it."""

    __tablename__ = "redelivery_watermarks"

    hook: Mapped[str] = mapped_column(String(64), primary_key=True)
    attempt_id: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[datetime] = created_column()


class ModelAnswer(Base):
    """A model's answer by a hash of the request (model, messages, format, length): a
    retried job reuses what it already paid for."""

    __tablename__ = "model_answers"
    __table_args__ = (Index("ix_model_answers_created_at", "created_at"),)

    request_sha: Mapped[str] = mapped_column(String(64), primary_key=True)
    content: Mapped[str] = mapped_column(Text)
    prompt_tokens: Mapped[int] = mapped_column(Integer)
    completion_tokens: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = created_column()


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
    # the review on its host: GitHub's review id, the id of a GitLab review's summary note
    host_review_id: Mapped[int | None] = mapped_column(BigInteger)
    comment_fingerprints: Mapped[list[str]] = mapped_column(ARRAY(String(64)), server_default="{}")
    comment_count: Mapped[int] = mapped_column(Integer, server_default="0")
    model: Mapped[str | None] = mapped_column(String(128))
    prompt_tokens: Mapped[int] = mapped_column(BigInteger, server_default="0")
    completion_tokens: Mapped[int] = mapped_column(BigInteger, server_default="0")
    created_at: Mapped[datetime] = (
        created_column()
    )  # the first attempt's claim: latency starts here
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
    created_at: Mapped[datetime] = created_column()


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
    recorded_at: Mapped[datetime] = created_column()


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
    started_at: Mapped[datetime] = created_column()
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
    created_at: Mapped[datetime] = created_column()


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
    created_at: Mapped[datetime] = created_column()
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AdminSignInFailure(Base):
    """A wrong admin token given to the sign-in form: what rate-limits guessing."""

    __tablename__ = "admin_sign_in_failures"
    __table_args__ = (Index("ix_admin_sign_in_failures_client_failed_at", "client", "failed_at"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    client: Mapped[str] = mapped_column(String(64))
    failed_at: Mapped[datetime] = created_column()

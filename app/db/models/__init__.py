"""The tables. Alembic migrations create them; a drift test keeps the two in step."""

from app.config import EMBEDDING_DIMS
from app.db.models.activity import (
    AdminSession,
    AdminSignInFailure,
    Conversation,
    IndexRun,
    JobError,
    ModelUsage,
    PrUsage,
    Review,
    ReviewFeedback,
    WebhookDelivery,
)
from app.db.models.base import CHUNK_TYPES, NAMING, Base
from app.db.models.index import (
    ChunkLink,
    CodeChunk,
    EmbeddingCache,
    HistoryChange,
    HistoryCommit,
    HistorySymbol,
    Repository,
    RepositoryCodeWord,
    RepositoryWord,
    SourceFile,
    SummaryCache,
)

__all__ = [
    "CHUNK_TYPES",
    "EMBEDDING_DIMS",
    "NAMING",
    "AdminSession",
    "AdminSignInFailure",
    "Base",
    "ChunkLink",
    "CodeChunk",
    "Conversation",
    "EmbeddingCache",
    "HistoryChange",
    "HistoryCommit",
    "HistorySymbol",
    "IndexRun",
    "JobError",
    "ModelUsage",
    "PrUsage",
    "Repository",
    "RepositoryCodeWord",
    "RepositoryWord",
    "Review",
    "ReviewFeedback",
    "SourceFile",
    "SummaryCache",
    "WebhookDelivery",
]

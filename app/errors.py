"""The exceptions reviewbot raises on purpose.

Every one derives from :class:`ReviewbotError`; its message is meant for the person
running the bot, on one line, and never carries a secret. The CLI prints it without a
traceback; jobs record it as the job's error (``job_errors``), shown by ``GET
/reindex/{id}`` and the dashboard.
"""


class ReviewbotError(Exception):
    """Base class; the docstring of each subclass is its default message."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (self.__doc__ or type(self).__name__).strip())


class ConfigError(ReviewbotError):
    """The configuration is invalid."""


class DataDirError(ConfigError):
    """The data directory cannot be created or written."""


class DatabaseError(ReviewbotError):
    """The database cannot be used."""


class DatabaseUnavailable(DatabaseError):
    """Cannot connect to PostgreSQL."""


class ExtensionMissing(DatabaseError):
    """An extension reviewbot needs (pgvector, btree_gin) cannot be created in this database."""


class EmbeddedServerError(DatabaseError):
    """The embedded PostgreSQL server failed to start."""

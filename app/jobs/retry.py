"""Which job failures are worth another attempt, and when.

Transient failures (the network, the code host or the model answering 5xx or 429, a database
that dropped the connection) are retried with exponential backoff. Everything else is
permanent (a 4xx from the code host, bad configuration, a malformed payload, an archive over
its limits, a bug): retrying cannot help, so the job fails at once and says why.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import httpx
import procrastinate.exceptions
import psycopg
import sqlalchemy.exc
from procrastinate import BaseRetryStrategy, RetryDecision
from procrastinate.jobs import Job

from app.forge.protocol import ForgeError
from app.indexing.indexer import IndexBusy
from app.review.model import ReviewModelError

TRANSIENT_TYPES: tuple[type[BaseException], ...] = (
    httpx.TransportError,
    psycopg.OperationalError,
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    procrastinate.exceptions.ConnectorException,
    ConnectionError,
    TimeoutError,
)


def is_transient(exc: BaseException) -> bool:
    """True when the same job may well succeed if it runs again later."""
    if isinstance(exc, IndexBusy):
        return True
    if isinstance(exc, ForgeError | ReviewModelError):
        status = exc.status
        return status is None or status >= 500 or status == 429
    if isinstance(exc, sqlalchemy.exc.DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, TRANSIENT_TYPES)


@dataclass(frozen=True)
class RetryByErrorKind(BaseRetryStrategy):
    """At most ``max_attempts`` runs in all; waits of 2, 4, 8, 16 s... between them; only
    transient failures are retried."""

    max_attempts: int = 6
    base_seconds: int = 2

    def get_retry_decision(self, *, exception: BaseException, job: Job) -> RetryDecision | None:
        # job.attempts counts the runs that ended before this one.
        if not is_transient(exception) or job.attempts + 1 >= self.max_attempts:
            return None
        wait = self.base_seconds * 2**job.attempts
        return RetryDecision(retry_at=_now() + datetime.timedelta(seconds=wait))

    def retry_plan(self) -> list[int]:
        """The waits, in seconds, between the runs of a job that keeps failing transiently."""
        return [self.base_seconds * 2**n for n in range(self.max_attempts - 1)]


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)

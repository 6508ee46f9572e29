"""Model answers already paid for, kept by the job that asked and a hash of exactly what
it asked (the model, the messages, the response format, the length cap): a job retried
after the model answered but before its result was posted (the code host failed, the
worker died) reuses the answer instead of paying for it again. Another job (a new
``/describe``, a new push) asks afresh. Kept two days.

A failure here never fails the job: the answer is then asked for (and paid) again.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError

from app.logs import kv

log = logging.getLogger(__name__)

KEEP = "2 days"


@dataclass(frozen=True)
class PaidAnswer:
    content: str
    prompt_tokens: int
    completion_tokens: int


class PaidAnswers:
    """The answers one job (``scope``) paid for, in the ``model_answers`` table. The
    constructor does no I/O."""

    def __init__(self, engine: Engine, scope: str) -> None:
        self.engine = engine
        self.scope = scope

    @classmethod
    def of_job(cls, engine: Engine, job_id: int | None) -> PaidAnswers | None:
        """A queued job's answers; None outside a job (the CLI), where nothing retries."""
        return cls(engine, f"job:{job_id}") if job_id is not None else None

    def _key(self, request_sha: str) -> str:
        return hashlib.sha256(f"{self.scope}:{request_sha}".encode()).hexdigest()

    def find(self, request_sha: str) -> PaidAnswer | None:
        try:
            with self.engine.connect() as conn:
                row = conn.execute(
                    text(
                        "SELECT content, prompt_tokens, completion_tokens FROM model_answers"
                        " WHERE request_sha = :k AND created_at > now() - CAST(:keep AS interval)"
                    ),
                    {"k": self._key(request_sha), "keep": KEEP},
                ).one_or_none()
        except DBAPIError as exc:
            log.warning(kv("model_answers.unreadable", error=type(exc.orig).__name__))
            return None
        return PaidAnswer(str(row[0]), int(row[1]), int(row[2])) if row is not None else None

    def keep(self, request_sha: str, answer: PaidAnswer) -> None:
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    text(
                        "DELETE FROM model_answers"
                        " WHERE created_at < now() - CAST(:keep AS interval)"
                    ),
                    {"keep": KEEP},
                )
                conn.execute(
                    text(
                        "INSERT INTO model_answers (request_sha, content, prompt_tokens,"
                        " completion_tokens) VALUES (:k, :c, :p, :o)"
                        " ON CONFLICT (request_sha) DO UPDATE SET content = excluded.content,"
                        " prompt_tokens = excluded.prompt_tokens,"
                        " completion_tokens = excluded.completion_tokens, created_at = now()"
                    ),
                    {
                        "k": self._key(request_sha),
                        "c": answer.content,
                        "p": answer.prompt_tokens,
                        "o": answer.completion_tokens,
                    },
                )
        except DBAPIError as exc:
            log.warning(kv("model_answers.not_kept", error=type(exc.orig).__name__))

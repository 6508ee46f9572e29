"""Which failures are retried, how often and when: a pure decision."""

from __future__ import annotations

import datetime

import httpx
import pytest
import sqlalchemy.exc
from procrastinate.jobs import Job

from app.errors import ConfigError
from app.github.client import GitHubError
from app.indexing.archive import ArchiveTooLarge
from app.indexing.indexer import IndexBusy
from app.jobs.retry import RetryByErrorKind, is_transient
from app.review.model import ReviewModelError


def job(attempts: int) -> Job:
    return Job(
        id=1, queue="default", lock=None, queueing_lock=None, task_name="t", attempts=attempts
    )


@pytest.mark.parametrize(
    ("exc", "transient"),
    [
        (GitHubError("GitHub GET /pulls/7 failed with HTTP 502", 502), True),
        (GitHubError("GitHub POST /x failed with HTTP 429", 429), True),
        (GitHubError("GitHub GET /x failed: ConnectTimeout"), True),
        (GitHubError("GitHub GET /pulls/7 failed with HTTP 404", 404), False),
        (GitHubError("GitHub GET /x failed with HTTP 403", 403), False),
        (ReviewModelError("review model failed (HTTP 503)", 503), True),
        (ReviewModelError("review model failed (APIConnectionError)"), True),
        (ReviewModelError("review model failed (HTTP 401)", 401), False),
        (IndexBusy(), True),
        (httpx.ConnectError("refused"), True),
        (sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("server closed")), True),
        (ConfigError("GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY(_PATH) must be set"), False),
        (ArchiveTooLarge(), False),
        (ValueError("Could not parse the provided public key."), False),
        (KeyError("head"), False),
    ],
)
def test_failures_are_sorted_by_kind(exc: BaseException, transient: bool) -> None:
    assert is_transient(exc) is transient


def test_transient_failures_get_six_runs_with_doubling_waits() -> None:
    strategy = RetryByErrorKind(max_attempts=6, base_seconds=2)
    transient = GitHubError("502", 502)
    before = datetime.datetime.now(datetime.UTC)
    waits = []
    for attempts in range(6):
        decision = strategy.get_retry_decision(exception=transient, job=job(attempts))
        if decision is None:
            break
        assert decision.retry_at is not None
        waits.append(round((decision.retry_at - before).total_seconds()))
    assert waits == [2, 4, 8, 16, 32] == strategy.retry_plan()  # 5 retries: 6 runs in all


def test_permanent_failures_are_never_retried() -> None:
    strategy = RetryByErrorKind()
    assert strategy.get_retry_decision(exception=GitHubError("404", 404), job=job(0)) is None


def test_job_failure_messages_are_one_line_and_secret_free() -> None:
    from app.jobs.tasks import describe_failure

    secret = "ghs_installationtoken0123"
    ours = GitHubError(f"GitHub GET /x failed with token {secret}", 401)
    theirs = ValueError(f"bad header Authorization: token {secret}\nsecond line")
    assert describe_failure(ours, [secret, "abc"]) == "GitHub GET /x failed with token **********"
    assert describe_failure(theirs, [secret]) == (
        "ValueError: bad header Authorization: token **********"
    )
    assert describe_failure(KeyError(), []) == "KeyError"

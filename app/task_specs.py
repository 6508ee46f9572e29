"""What each queued task is called, takes and locks on, written once.

Webhook intake (``app/github/events.py``) builds jobs from these; the worker
(``app/jobs/tasks.py``) registers its tasks under the same names, and a test holds each
task's parameters to its arguments' fields. Locks: a *queueing lock* coalesces jobs that
wait (a burst of pushes is one review of the newest head); a *lock* keeps jobs of one
key from running side by side.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any


class TaskName(StrEnum):
    REVIEW = "review_pull_request"
    DESCRIBE = "describe_pull_request"
    INDEX = "index_repository"
    ENRICH = "enrich_repository"
    PURGE = "purge_repository"
    COMMAND = "pr_command"
    ANSWER_QUESTION = "answer_question"
    ANSWER_REPLY = "answer_reply"
    COLLECT_FEEDBACK = "collect_feedback"


@dataclass(frozen=True)
class ReviewArgs:
    repo: str
    installation_id: int
    pr_number: int
    full: bool = False


@dataclass(frozen=True)
class DescribeArgs:
    repo: str
    installation_id: int
    pr_number: int


@dataclass(frozen=True)
class IndexArgs:
    repo: str
    installation_id: int
    full: bool


@dataclass(frozen=True)
class RepositoryArgs:
    """Enrichment and purge: the repository alone."""

    repo: str


@dataclass(frozen=True)
class CommandArgs:
    repo: str
    installation_id: int
    pr_number: int
    command: str
    user: str | None
    comment_id: int | None


@dataclass(frozen=True)
class QuestionArgs:
    repo: str
    installation_id: int
    pr_number: int
    question: str
    user: str | None
    comment_id: int


@dataclass(frozen=True)
class ReplyArgs:
    repo: str
    installation_id: int
    pr_number: int
    comment_id: int
    parent_id: int
    said: str
    user: str | None


@dataclass(frozen=True)
class FeedbackArgs:
    repo: str
    installation_id: int
    pr_number: int


TaskArgs = (
    ReviewArgs
    | DescribeArgs
    | IndexArgs
    | RepositoryArgs
    | CommandArgs
    | QuestionArgs
    | ReplyArgs
    | FeedbackArgs
)

#: The arguments each task takes.
ARGUMENTS: dict[TaskName, type[TaskArgs]] = {
    TaskName.REVIEW: ReviewArgs,
    TaskName.DESCRIBE: DescribeArgs,
    TaskName.INDEX: IndexArgs,
    TaskName.ENRICH: RepositoryArgs,
    TaskName.PURGE: RepositoryArgs,
    TaskName.COMMAND: CommandArgs,
    TaskName.ANSWER_QUESTION: QuestionArgs,
    TaskName.ANSWER_REPLY: ReplyArgs,
    TaskName.COLLECT_FEEDBACK: FeedbackArgs,
}


def review_lock(repo: str, pr_number: int) -> str:
    """One review of a PR at a time, and one waiting: the review job's lock, which the
    review flow also takes on the repository's row."""
    return f"review:{repo}#{pr_number}"


def describe_lock(repo: str, pr_number: int) -> str:
    return f"describe:{repo}#{pr_number}"


def conversation_lock(repo: str, pr_number: int) -> str:
    """Answers on one PR go one at a time, so its hourly limit is counted in order."""
    return f"ask:{repo}#{pr_number}"


def feedback_lock(repo: str, pr_number: int) -> str:
    return f"feedback:{repo}#{pr_number}"


def index_lock(repo: str) -> str:
    """Index runs and purges of one repository never overlap."""
    return f"index:{repo}"


def enrich_lock(repo: str) -> str:
    return f"enrich:{repo}"


@dataclass(frozen=True)
class Job:
    """A job to enqueue: the task, its arguments, and its coalescing and serial locks."""

    task: TaskName
    spec: TaskArgs
    queueing_lock: str | None = None
    lock: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.spec, ARGUMENTS[self.task]):
            raise TypeError(f"{self.task} takes {ARGUMENTS[self.task].__name__}")

    @property
    def args(self) -> dict[str, Any]:
        """The keyword arguments the task is deferred with."""
        return asdict(self.spec)

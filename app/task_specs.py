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
    parent_id: int | None  # None: the host's event does not say; the job looks it up
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


# -- the jobs webhooks (of any host) and the admin API enqueue --------------------


def review_job(repo: str, installation_id: int, pr_number: int, full: bool = False) -> Job:
    # One queued review per PR: a burst of pushes coalesces into one job, which reviews
    # the newest head when it runs. Reviews of one PR never run side by side.
    key = review_lock(repo, pr_number)
    args = ReviewArgs(repo, installation_id, pr_number, full)
    return Job(TaskName.REVIEW, args, queueing_lock=key, lock=key)


def index_job(repo: str, installation_id: int, full: bool) -> Job:
    key = index_lock(repo)
    queueing = key if not full else f"{key}:full"
    return Job(TaskName.INDEX, IndexArgs(repo, installation_id, full), queueing, lock=key)


def purge_job(repo: str) -> Job:
    return Job(TaskName.PURGE, RepositoryArgs(repo), lock=index_lock(repo))


def describe_job(repo: str, installation_id: int, pr_number: int) -> Job:
    # the description follows the newest head, like the review; the job reads whether
    # the repository wants one (``describe`` in .reviewbot.toml)
    key = describe_lock(repo, pr_number)
    args = DescribeArgs(repo, installation_id, pr_number)
    return Job(TaskName.DESCRIBE, args, queueing_lock=key, lock=key)


def conversation_job(task: TaskName, args: QuestionArgs | ReplyArgs) -> Job:
    return Job(task, args, lock=conversation_lock(args.repo, args.pr_number))


def command_job(args: CommandArgs) -> Job:
    return Job(TaskName.COMMAND, args)


def feedback_job(repo: str, installation_id: int, pr_number: int) -> Job:
    """What people made of the bot's comments, read once the PR is done."""
    key = feedback_lock(repo, pr_number)
    args = FeedbackArgs(repo, installation_id, pr_number)
    return Job(TaskName.COLLECT_FEEDBACK, args, queueing_lock=key, lock=key)

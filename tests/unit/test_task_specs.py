"""Producer and consumer agree: each queued task takes exactly its arguments' fields."""

import dataclasses
import inspect

import pytest

from app.jobs.queue import queue
from app.jobs.tasks import review_pull_request  # noqa: F401  (registers the tasks)
from app.task_specs import ARGUMENTS, Job, RepositoryArgs, ReviewArgs, TaskName


@pytest.mark.parametrize("name", list(TaskName))
def test_every_task_takes_its_arguments_fields(name: TaskName) -> None:
    task = queue.tasks[name.value]
    params = list(inspect.signature(task.func).parameters.values())[1:]  # after the context
    fields = dataclasses.fields(ARGUMENTS[name])
    assert [p.name for p in params] == [f.name for f in fields]
    for param, field in zip(params, fields, strict=True):
        has_default = field.default is not dataclasses.MISSING
        assert (param.default is not inspect.Parameter.empty) == has_default, param.name
        if has_default:
            assert param.default == field.default


def test_a_job_refuses_another_tasks_arguments() -> None:
    with pytest.raises(TypeError, match="review_pull_request takes ReviewArgs"):
        Job(TaskName.REVIEW, RepositoryArgs("o/r"))
    job = Job(TaskName.REVIEW, ReviewArgs("o/r", 7, 3))
    assert job.args == {"repo": "o/r", "installation_id": 7, "pr_number": 3, "full": False}
    assert job.task == "review_pull_request"  # stored as the same text as before

"""Which jobs GitLab's events ask for, from GitLab's documented payloads."""

from __future__ import annotations

from typing import Any

import pytest

from app.forge.intake import WebhookRejected
from app.gitlab.events import check_payload, delivery_key, event_of, jobs_for
from app.task_specs import TaskName
from tests.webhooks import payload

URL = "https://gitlab.example.com"
KEY = "gitlab.example.com/acme/shop"
PROJECT = {"project.id": 15, "project.path_with_namespace": "acme/shop"}


def jobs(name: str, **changes: Any) -> list[tuple[TaskName, dict[str, Any]]]:
    data = payload(f"gitlab/{name}", **PROJECT, **changes)
    check_payload(data)
    return [(job.task, job.args) for job in jobs_for(event_of(data, URL))]


def test_an_opened_merge_request_is_reviewed_and_described() -> None:
    found = jobs("merge-request-event")  # the documented example: action "open"
    assert [task for task, _ in found] == [TaskName.REVIEW, TaskName.DESCRIBE]
    args = found[0][1]
    assert (args["repo"], args["installation_id"], args["pr_number"]) == (KEY, 15, 1)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"object_attributes.action": "update", "changes": {}}, []),  # a title edit
        (
            {"object_attributes.action": "update", "object_attributes.oldrev": "a" * 40},
            [TaskName.REVIEW, TaskName.DESCRIBE],
        ),  # new commits
        (
            {
                "object_attributes.action": "update",
                "changes": {"draft": {"previous": True, "current": False}},
            },
            [TaskName.REVIEW, TaskName.DESCRIBE],
        ),  # marked ready
        ({"object_attributes.action": "reopen"}, [TaskName.REVIEW, TaskName.DESCRIBE]),
        ({"object_attributes.action": "close"}, [TaskName.COLLECT_FEEDBACK]),
        ({"object_attributes.action": "merge"}, [TaskName.COLLECT_FEEDBACK]),
        ({"object_attributes.action": "approved", "changes": {}}, []),
    ],
)
def test_merge_request_actions(changes: dict[str, Any], expected: list[TaskName]) -> None:
    assert [task for task, _ in jobs("merge-request-event", **changes)] == expected


def note(body: str, **changes: Any) -> list[tuple[TaskName, dict[str, Any]]]:
    return jobs("comment-merge-request-event", **{"object_attributes.note": body, **changes})


def test_notes_ask_command_and_reply() -> None:
    [(task, args)] = note("/ask why a fraction?")
    assert task is TaskName.ANSWER_QUESTION
    assert (args["question"], args["comment_id"], args["user"], args["pr_number"]) == (
        "why a fraction?",
        1244,
        "root",
        1,
    )
    [(task, args)] = note("/review")
    assert task is TaskName.COMMAND and args["command"] == "review"
    [(task, args)] = note("Why?", **{"object_attributes.type": "DiffNote"})
    assert task is TaskName.ANSWER_REPLY and args["parent_id"] is None  # looked up by the job
    assert note("This MR needs work.") == []  # the documented example: just a comment
    assert note("/ask anything", **{"user.username": "project_15_bot_1a2b"}) == []  # a bot
    assert note("/resolve", **{"object_attributes.type": "DiffNote"}) == []
    assert note("/review", **{"object_attributes.action": "update"}) == []  # an edit
    assert note("/review", **{"object_attributes.noteable_type": "Issue"}) == []


def test_a_push_to_the_default_branch_reindexes() -> None:
    [(task, args)] = jobs("push-event", ref="refs/heads/main", **{"project.default_branch": "main"})
    assert task is TaskName.INDEX and args == {"repo": KEY, "installation_id": 15, "full": False}
    assert jobs("push-event", ref="refs/heads/feature", **{"project.default_branch": "main"}) == []
    deleted = {"ref": "refs/heads/main", "after": "0" * 40, "project.default_branch": "main"}
    assert jobs("push-event", **deleted) == []


def test_events_without_a_project_id_ask_for_nothing() -> None:
    data = payload("gitlab/push-event")  # the older documented example has no project.id
    assert jobs_for(event_of(data, URL)) == []


def test_the_delivery_key() -> None:
    assert delivery_key({"x-gitlab-event-uuid": "u-1", "idempotency-key": "k-1"}) == "k-1"
    assert delivery_key({"x-gitlab-event-uuid": "u-1"}) == "u-1"
    for headers in ({}, {"x-gitlab-event-uuid": "../etc"}):
        with pytest.raises(WebhookRejected) as refused:
            delivery_key(headers)
        assert refused.value.status == 400


@pytest.mark.parametrize(
    ("dotted", "value"),
    [
        ("project.id", "15"),
        ("project.id", -1),
        ("project.id", 2**63),
        ("project.path_with_namespace", "no-namespace"),
        ("project.path_with_namespace", "../x"),
        ("project", []),
        ("object_attributes", "x"),
        ("object_attributes.iid", True),
        ("object_attributes.action", 5),
        ("object_attributes.note", ["x"]),
        ("merge_request", 3),
        ("user.username", {"a": 1}),
        ("changes", []),
    ],
)
def test_malformed_fields_are_refused(dotted: str, value: Any) -> None:
    data = payload("gitlab/merge-request-event", **PROJECT)
    data["merge_request"] = {"iid": 1}
    data["user"] = {"username": "root"}
    target = data
    *parents, last = dotted.split(".")
    for key in parents:
        target = target[key]
    target[last] = value
    with pytest.raises(WebhookRejected) as refused:
        check_payload(data)
    assert refused.value.status == 400

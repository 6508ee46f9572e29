"""Which jobs each documented webhook payload asks for (pure routing)."""

import pytest

from app.github.events import EventContext, WebhookRejected, check_signature, router
from tests.webhooks import payload, signed


def jobs(event: str, name: str, **changes: object):  # type: ignore[no-untyped-def]
    data = payload(name, **changes)
    return router.jobs_for(EventContext(event, data.get("action"), data))


def test_pull_request_opened_asks_for_one_coalescing_review_and_a_description() -> None:
    job, describe = jobs("pull_request", "pull_request.opened")
    assert (describe.task, describe.lock) == (
        "describe_pull_request",
        "describe:Codertocat/Hello-World#2",
    )
    assert describe.queueing_lock == describe.lock  # a burst of pushes: one description
    assert job.task == "review_pull_request"
    assert job.args == {
        "repo": "Codertocat/Hello-World",
        "installation_id": job.args["installation_id"],
        "pr_number": 2,
        "full": False,
    }
    assert job.queueing_lock == job.lock == "review:Codertocat/Hello-World#2"


@pytest.mark.parametrize("name", ["pull_request.synchronize", "pull_request.ready_for_review"])
def test_other_review_triggers(name: str) -> None:
    assert [j.task for j in jobs("pull_request", name)] == [
        "review_pull_request",
        "describe_pull_request",
    ]


def test_closed_prs_are_not_reviewed_and_drafts_are_left_to_the_job() -> None:
    """Whether a draft is reviewed is the repository's setting (``drafts`` in its
    ``.reviewbot.toml``, else REVIEWBOT_REVIEW_DRAFTS), which the job reads."""
    [closed] = jobs("pull_request", "pull_request.closed")
    assert closed.task == "collect_feedback"  # not a review: what people made of ours
    assert closed.args["pr_number"] == 2 and closed.lock == closed.queueing_lock
    draft, _ = jobs("pull_request", "pull_request.opened", **{"pull_request.draft": True})
    assert draft.task == "review_pull_request"


def test_push_to_default_branch_reindexes_other_branches_do_not() -> None:
    assert jobs("push", "push") == []  # the documented example deletes a tag
    [job] = jobs("push", "push", ref="refs/heads/master", deleted=False)
    assert (job.task, job.args["full"], job.lock) == (
        "index_repository",
        False,
        "index:Codertocat/Hello-World",
    )
    assert jobs("push", "push", ref="refs/heads/feature", deleted=False) == []


def test_installation_events_index_and_purge_each_repository() -> None:
    created = jobs("installation", "installation.created")
    assert created and {j.task for j in created} == {"index_repository"}
    assert all(j.args["full"] for j in created)
    assert {j.task for j in jobs("installation", "installation.deleted")} == {"purge_repository"}
    assert {
        j.task for j in jobs("installation_repositories", "installation_repositories.added")
    } == {"index_repository"}
    assert {
        j.task for j in jobs("installation_repositories", "installation_repositories.removed")
    } == {"purge_repository"}


def test_review_command_on_a_pr_comment() -> None:
    pr_issue = {"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"}
    [job] = jobs(
        "issue_comment",
        "issue_comment.created",
        **{"comment.body": " /review ", "issue.pull_request": pr_issue},
    )
    assert job.task == "pr_command" and job.args["command"] == "review"
    assert (
        jobs("issue_comment", "issue_comment.created", **{"comment.body": "/review"}) == []
    )  # not a PR
    assert (
        jobs(
            "issue_comment",
            "issue_comment.created",
            **{"comment.body": "nice", "issue.pull_request": pr_issue},
        )
        == []
    )


@pytest.mark.parametrize("command", ["describe", "help", "reindex"])
def test_other_commands_on_a_pr_comment(command: str) -> None:
    pr_issue = {"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"}
    [job] = jobs(
        "issue_comment",
        "issue_comment.created",
        **{"comment.body": f"/{command}", "issue.pull_request": pr_issue},
    )
    assert job.task == "pr_command" and job.args["command"] == command


def test_a_resolve_reply_in_a_thread_is_not_a_question() -> None:
    said = {"installation": {"id": 1}, "comment.in_reply_to_id": 41}
    assert (
        jobs(
            "pull_request_review_comment",
            "pull_request_review_comment.created",
            **said,
            **{"comment.body": " /resolve "},
        )
        == []
    )
    [reply] = jobs(
        "pull_request_review_comment",
        "pull_request_review_comment.created",
        **said,
        **{"comment.body": "why?"},
    )
    assert reply.task == "answer_reply"


def test_ask_on_a_pr_comment_and_replies_in_review_threads() -> None:
    pr_issue = {"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"}
    [ask] = jobs(
        "issue_comment",
        "issue_comment.created",
        **{"comment.body": "/ask what does this do?", "issue.pull_request": pr_issue},
    )
    assert ask.task == "answer_question" and ask.args["question"] == "what does this do?"
    assert ask.lock == "ask:Codertocat/Hello-World#1"
    bare = {"comment.body": "/ask  ", "issue.pull_request": pr_issue}
    assert jobs("issue_comment", "issue_comment.created", **bare) == []
    from_a_bot = {"comment.body": "/ask hi", "issue.pull_request": pr_issue}
    assert (
        jobs("issue_comment", "issue_comment.created", **from_a_bot, **{"comment.user.type": "Bot"})
        == []
    )

    name = "pull_request_review_comment.created"
    installed = {"installation": {"id": 1}}
    assert jobs("pull_request_review_comment", name, **installed) == []  # not a reply
    [reply] = jobs(
        "pull_request_review_comment", name, **installed, **{"comment.in_reply_to_id": 99}
    )
    assert reply.task == "answer_reply"
    assert (reply.args["parent_id"], reply.args["comment_id"]) == (99, 284312630)
    assert reply.args["said"] == "Maybe you should use more emoji on this line."
    bot = {**installed, "comment.in_reply_to_id": 99, "comment.user.login": "reviewbot[bot]"}
    assert jobs("pull_request_review_comment", name, **bot) == []


def test_ping_and_unknown_events_ask_for_nothing() -> None:
    assert jobs("ping", "ping") == []
    assert router.jobs_for(EventContext("star", "created", {"action": "created"})) == []


def test_signature_check() -> None:
    body = b'{"zen": "Design for failure."}'
    check_signature("s3cret-value", body, signed("s3cret-value", body))
    for header in (
        None,
        "",
        "sha1=abc",
        signed("other-secret", body),
        signed("s3cret-value", body + b" "),
    ):
        with pytest.raises(WebhookRejected) as info:
            check_signature("s3cret-value", body, header)
        assert info.value.status == 401

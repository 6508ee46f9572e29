"""Answers and feedback under faults: each question answered once whatever fails, and
feedback read from reactions and resolved threads."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from app.flows.conversation import answer_question, answer_reply
from app.flows.feedback import collect_feedback
from app.flows.review import review_pull_request
from app.github.client import GitHubError
from app.review.model import ReviewModelError
from app.runtime import Runtime
from tests.conftest import GITHUB_INSTALLATION, GITHUB_REPO
from tests.fakes.github_server import FakeGitHub
from tests.fakes.openai_server import CHAT, FakeOpenAI
from tests.shop_repo import answering_model, answers_posted


@pytest.fixture
def answering(run: Runtime, fake_openai: FakeOpenAI) -> Runtime:
    fake_openai.chat_reply = answering_model
    return run


def _ask(run: Runtime, comment_id: int = 700) -> str:
    return answer_question(run, GITHUB_REPO, GITHUB_INSTALLATION, 7, "Why?", "alice", comment_id)


def _status(run: Runtime, question_id: int) -> str:
    with run.engine.connect() as conn:
        return str(
            conn.execute(
                text("SELECT status FROM conversations WHERE question_id = :q"), {"q": question_id}
            ).scalar_one()
        )


def test_a_github_502_after_the_answer_was_posted_gives_one_answer(
    answering: Runtime, github: FakeGitHub
) -> None:
    github.fail_next("POST", "/issues/7/comments", [502], apply=True)
    with pytest.raises(GitHubError) as failed:
        _ask(answering)
    assert failed.value.status == 502  # transient: the job runs again
    assert _status(answering, 700) == "answering"
    assert _ask(answering) == "reconciled"
    assert len(answers_posted(github.comments)) == 1 and _status(answering, 700) == "answered"
    assert _ask(answering) == "done"


def test_a_worker_killed_before_it_recorded_the_answer_does_not_answer_twice(
    answering: Runtime, github: FakeGitHub
) -> None:
    assert _ask(answering) == "answered"
    with answering.engine.connect() as conn:  # the answer's model call is counted
        assert conn.execute(
            text("SELECT purpose, calls FROM model_usage WHERE purpose = 'answer'")
        ).all() == [("answer", 1)]
    with answering.engine.begin() as conn:  # as if the worker died right after posting
        conn.execute(text("UPDATE conversations SET status = 'answering'"))
    assert _ask(answering) == "reconciled"
    assert len(answers_posted(github.comments)) == 1


def test_a_failing_model_leaves_the_question_to_the_retry(
    answering: Runtime, github: FakeGitHub, fake_openai: FakeOpenAI
) -> None:
    fake_openai.down = True
    with pytest.raises(ReviewModelError) as failed:
        _ask(answering)
    assert failed.value.status == 503 and answers_posted(github.comments) == []
    fake_openai.down = False
    assert _ask(answering) == "answered"
    assert len(answers_posted(github.comments)) == 1


def test_a_reply_under_someone_elses_or_a_deleted_comment_is_not_answered(
    answering: Runtime, github: FakeGitHub, fake_openai: FakeOpenAI
) -> None:
    assert review_pull_request(answering, GITHUB_REPO, GITHUB_INSTALLATION, 7) == "posted"
    [ours] = github.review_comments
    theirs = github.add_reply(ours["id"], "A person's note", "bob")
    said = answer_reply(
        answering, GITHUB_REPO, GITHUB_INSTALLATION, 7, 99, theirs["id"], "ok?", "carol"
    )
    assert said == "not ours"
    gone = answer_reply(answering, GITHUB_REPO, GITHUB_INSTALLATION, 7, 98, 424242, "?", "carol")
    assert gone == "not ours"
    assert not any(
        "answering a question" in b["messages"][0]["content"] for b in fake_openai.bodies(CHAT)
    )


def test_feedback_counts_people_not_bots_and_resolved_threads_count_as_accepted(
    answering: Runtime, github: FakeGitHub
) -> None:
    assert review_pull_request(answering, GITHUB_REPO, GITHUB_INSTALLATION, 7) == "posted"
    [ours] = github.review_comments
    github.review_reactions[ours["id"]] = [
        {"content": "-1", "user": {"login": "ci-bot[bot]", "type": "Bot"}},
        {"content": "heart", "user": {"login": "alice", "type": "User"}},
    ]
    github.add_reply(ours["id"], "Fixed, thanks", "alice")  # replies are not findings
    github.resolved_threads.add(ours["id"])
    assert collect_feedback(answering, GITHUB_REPO, GITHUB_INSTALLATION, 7) == 1
    github.resolved_threads.clear()  # closed, reopened, unresolved, 👎, closed again
    github.review_reactions[ours["id"]].append({"content": "-1", "user": {"login": "bob"}})
    assert collect_feedback(answering, GITHUB_REPO, GITHUB_INSTALLATION, 7) == 1
    with answering.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT verdict, thumbs_up, thumbs_down, resolved FROM review_feedback")
        ).all()
    assert rows == [("rejected", 0, 1, False)]


def test_feedback_is_retried_when_github_fails(answering: Runtime, github: FakeGitHub) -> None:
    assert review_pull_request(answering, GITHUB_REPO, GITHUB_INSTALLATION, 7) == "posted"
    github.fail_next("POST", "/graphql", [502])
    with pytest.raises(GitHubError):
        collect_feedback(answering, GITHUB_REPO, GITHUB_INSTALLATION, 7)
    assert collect_feedback(answering, GITHUB_REPO, GITHUB_INSTALLATION, 7) == 1


def test_a_limit_of_zero_turns_questions_off_without_a_word(
    answering: Runtime, github: FakeGitHub
) -> None:
    off = Runtime(answering.settings.model_copy(update={"ask_limit_per_hour": 0}), answering.engine)
    assert _ask(off) == "off"
    assert github.comments == [] and github.reactions == []

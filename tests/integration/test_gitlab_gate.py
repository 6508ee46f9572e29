"""The merge gate on GitLab through failures, against a fake GitLab that keeps GitLab's
commit-status state machine (a transition from a state to itself is refused with 400):
a status left running by an attempt that died is taken over, a failed review is never
green, and a review whose answer was lost sets the gate from what GitLab has."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from app.config import Settings
from app.flows.review import review_pull_request
from app.gitlab.records import repo_key
from app.review.model import ReviewFormatError
from app.runtime import Runtime
from tests.conftest import GITLAB_PROJECT, GITLAB_PROJECT_ID
from tests.fakes.gitlab_server import FakeGitLab
from tests.fakes.openai_server import FakeOpenAI


@pytest.fixture
def gated(gitlab_settings: Settings, engine: Engine) -> Runtime:
    return Runtime(gitlab_settings.model_copy(update={"review_gate": "minor"}), engine)


def states(gitlab: FakeGitLab) -> list[str]:
    return [s["status"] for s in gitlab.statuses]


def test_a_status_left_running_by_a_dead_attempt_is_taken_over(
    gated: Runtime, gitlab: FakeGitLab
) -> None:
    head = gitlab.mrs[7].head
    # the dead attempt's, on the MR's branch as the bot sets it without an MR pipeline
    gitlab._status(head, {"state": "running", "name": "reviewbot", "ref": "coupons"})
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    assert review_pull_request(gated, repo, GITLAB_PROJECT_ID, 7) == "posted"
    assert states(gitlab) == ["running", "failed"]  # no second "running": GitLab refuses it
    assert len(gitlab.status_records) == 1


def test_a_review_that_failed_is_never_green(
    gated: Runtime, gitlab: FakeGitLab, fake_openai: FakeOpenAI
) -> None:
    fake_openai.chat_reply = lambda body: "not json at all"
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    with pytest.raises(ReviewFormatError):
        review_pull_request(gated, repo, GITLAB_PROJECT_ID, 7)
    assert states(gitlab) == ["running", "canceled"]
    assert gitlab.summaries(7) == []


def test_a_review_whose_answer_was_lost_sets_the_gate_on_the_retry(
    gated: Runtime, gitlab: FakeGitLab
) -> None:
    """The review is published but the answer is lost: the attempt fails (its status
    canceled, not green); the retry finds the review and fails the gate for its finding."""
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    gitlab.fail_next("POST", "/merge_requests/7/draft_notes/bulk_publish", [502], apply=True)
    with pytest.raises(Exception, match="502"):
        review_pull_request(gated, repo, GITLAB_PROJECT_ID, 7)
    assert len(gitlab.summaries(7)) == 1 and states(gitlab)[-1] == "canceled"
    assert review_pull_request(gated, repo, GITLAB_PROJECT_ID, 7) == "reconciled"
    assert len(gitlab.summaries(7)) == 1
    assert states(gitlab)[-1] == "failed"  # a minor finding (at least) is open


@pytest.mark.parametrize("kind", ["merge request pipeline", "merged results pipeline"])
def test_the_gate_lands_in_the_merge_requests_head_pipeline_and_blocks_it(
    gated: Runtime, gitlab: FakeGitLab, kind: str
) -> None:
    """With a merge-request pipeline (on the head) or a merged-results one (on the merge
    of the head into the target), a status posted with no pipeline would land in a
    pipeline of its own and gate nothing: it is set in the MR's head pipeline."""
    mr = gitlab.mrs[7]
    sha = mr.head
    if kind == "merged results pipeline":
        gitlab.repo.git("checkout", "-q", "-b", "merge-ref", mr.base)
        gitlab.repo.git("merge", "-q", "--no-ff", "-m", "Merge", mr.head)
        sha = gitlab.repo.git("rev-parse", "HEAD").decode().strip()
        gitlab.repo.git("checkout", "-q", "main")
    mr.pipelines = [{"id": 555, "sha": sha, "ref": "refs/merge-requests/7/head", "source": "mr"}]
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    assert review_pull_request(gated, repo, GITLAB_PROJECT_ID, 7) == "posted"
    assert {(s["pipeline_id"], s["sha"]) for s in gitlab.statuses} == {(555, sha)}
    assert gitlab.status_records[-1]["status"] == "failed"
    assert gitlab.merge_blocked(7)  # a minor finding is open under gate = "minor"


# -- the gate as an approval, where an approval rule names the bot ----------------------

BOT_RULE = [{"name": "reviewbot", "eligible_approvers": ["reviewbot"]}]


def test_a_rule_naming_the_bot_gets_its_approval_when_the_gate_passes(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    mr = gitlab.mrs[7]
    mr.approval_rules = BOT_RULE
    run = Runtime(gitlab_settings.model_copy(update={"review_gate": "critical"}), engine)
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    assert review_pull_request(run, repo, GITLAB_PROJECT_ID, 7) == "posted"
    assert states(gitlab) == ["running", "success"]
    assert mr.approved_by == {"reviewbot": mr.head}  # the head it reviewed


@pytest.mark.parametrize("fails", ["gate", "review"])
def test_the_approval_is_taken_back_when_the_gate_or_the_review_fails(
    gated: Runtime, gitlab: FakeGitLab, fake_openai: FakeOpenAI, fails: str
) -> None:
    mr = gitlab.mrs[7]
    mr.approval_rules = BOT_RULE
    mr.approved_by = {"reviewbot": mr.base}  # approved before, on another head
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    if fails == "gate":  # the review's major and minor findings, gated at minor
        assert review_pull_request(gated, repo, GITLAB_PROJECT_ID, 7) == "posted"
        assert states(gitlab) == ["running", "failed"]
    else:
        fake_openai.chat_reply = lambda body: "not json at all"
        with pytest.raises(ReviewFormatError):
            review_pull_request(gated, repo, GITLAB_PROJECT_ID, 7)
    assert mr.approved_by == {}


def test_without_a_rule_naming_the_bot_nothing_is_approved(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    run = Runtime(gitlab_settings.model_copy(update={"review_gate": "critical"}), engine)
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    for rules in (None, [{"name": "leads", "eligible_approvers": ["alice"]}]):
        gitlab.mrs[7].approval_rules = rules  # Free (no rules), then a rule of others
        gitlab.status_records.clear()
        gitlab.notes.clear()
        review_pull_request(run, repo, GITLAB_PROJECT_ID, 7)
    assert gitlab.mrs[7].approved_by == {}
    assert not any(p.endswith(("/approve", "/approvals")) for _, p in gitlab.requests)


def test_an_approval_gitlab_refuses_leaves_the_review_and_its_status_done(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    """The bot may not approve (its own MR under "Prevent approval by author"): 401 is
    logged, and the review and its green status stand."""
    gitlab.mrs[7].approval_rules = BOT_RULE
    run = Runtime(gitlab_settings.model_copy(update={"review_gate": "critical"}), engine)
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    gitlab.fail_next("POST", "/merge_requests/7/approve", [401])
    assert review_pull_request(run, repo, GITLAB_PROJECT_ID, 7) == "posted"
    assert states(gitlab) == ["running", "success"] and gitlab.mrs[7].approved_by == {}


def test_an_approval_that_fails_on_the_way_is_given_by_the_retry(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    gitlab.mrs[7].approval_rules = BOT_RULE
    run = Runtime(gitlab_settings.model_copy(update={"review_gate": "critical"}), engine)
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    gitlab.fail_next("POST", "/merge_requests/7/approve", [502])
    with pytest.raises(Exception, match="502"):
        review_pull_request(run, repo, GITLAB_PROJECT_ID, 7)
    assert gitlab.mrs[7].approved_by == {}
    review_pull_request(run, repo, GITLAB_PROJECT_ID, 7)  # the job's retry
    assert gitlab.mrs[7].approved_by == {"reviewbot": gitlab.mrs[7].head}
    assert len(gitlab.summaries(7)) == 1  # the review itself once

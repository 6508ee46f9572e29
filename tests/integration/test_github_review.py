"""Reviewing pull requests on a fake GitHub (real HTTP, real JWTs) with a fake model."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, text

from app.flows.commands import run_command
from app.flows.review import review_pull_request
from app.github.client import GitHubError
from app.jobs.retry import is_transient
from app.review.model import ReviewFormatError
from app.review.prompt import REPAIR
from app.runtime import Runtime
from tests.conftest import GITHUB_INSTALLATION, GITHUB_REPO
from tests.fakes.github_server import FakeGitHub
from tests.fakes.openai_server import CHAT, FakeOpenAI
from tests.shop_repo import CHECKOUT_V2

REPO = GITHUB_REPO
INSTALLATION = GITHUB_INSTALLATION


def reviews_in_db(engine: Engine) -> list[tuple[object, ...]]:
    with engine.connect() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                text(
                    "SELECT pr_number, head_sha, status, host_review_id,"
                    " cardinality(comment_fingerprints) FROM reviews ORDER BY id"
                )
            )
        ]


def test_pull_request_gets_one_review_with_inline_comments(
    run: Runtime, github: FakeGitHub
) -> None:
    assert review_pull_request(run, REPO, INSTALLATION, 7) == "posted"

    [review] = github.reviews
    assert review["commit_id"] == github.pulls[7].head and review["event"] == "COMMENT"
    [comment] = review["comments"]
    assert (comment["path"], comment["line"], comment["side"]) == ("shop/checkout.py", 7, "RIGHT")
    assert "```suggestion" in comment["body"]
    assert "Applies coupon discounts at checkout." in review["body"]
    assert "shop/pricing.py:5 Not in the diff" in review["body"]  # moved, not lost
    assert f"reviewbot:head={github.pulls[7].head}" in review["body"]
    assert reviews_in_db(run.engine) == [(7, github.pulls[7].head, "posted", review["id"], 1)]
    assert github.tokens_issued == 1  # the installation token is cached

    assert review_pull_request(run, REPO, INSTALLATION, 7) == "already reviewed"
    assert len(github.reviews) == 1


def test_new_commits_are_reviewed_alone_and_comments_not_repeated(
    run: Runtime, github: FakeGitHub
) -> None:
    review_pull_request(run, REPO, INSTALLATION, 7)
    repo = github.repo
    repo.write(
        "shop/checkout.py",
        CHECKOUT_V2 + "\n\ndef refund_total(cart):\n    return -sum(i.price for i in cart)\n",
    )
    github.pulls[7].head = repo.commit("Add refunds")
    compare_before = sum(1 for m, p in github.requests if "/compare/" in p)

    assert review_pull_request(run, REPO, INSTALLATION, 7) == "posted"

    assert sum(1 for m, p in github.requests if "/compare/" in p) == compare_before + 1
    second = github.reviews[-1]
    assert second["comments"] == []  # the same finding on line 7 is not posted twice
    assert len(github.reviews) == 2


def test_refused_inline_comments_still_post_the_review(run: Runtime, github: FakeGitHub) -> None:
    github.fail_next("POST", "/pulls/7/reviews", [422])
    assert review_pull_request(run, REPO, INSTALLATION, 7) == "posted"
    [review] = github.reviews
    assert review["comments"] == []
    assert "`shop/checkout.py:7` **Fraction passed where a percent is expected**" in review["body"]


def test_lost_response_after_posting_is_reconciled_not_reposted(
    run: Runtime, github: FakeGitHub
) -> None:
    github.fail_next("POST", "/pulls/7/reviews", [502], apply=True)
    with pytest.raises(GitHubError, match="HTTP 502"):
        review_pull_request(run, REPO, INSTALLATION, 7)  # the job fails; procrastinate retries it
    assert len(github.reviews) == 1  # GitHub did create it
    assert review_pull_request(run, REPO, INSTALLATION, 7) == "reconciled"
    assert len(github.reviews) == 1
    # recorded as if this attempt had posted it: its id, and its finding's fingerprint
    assert reviews_in_db(run.engine) == [
        (7, github.pulls[7].head, "posted", github.reviews[0]["id"], 1)
    ]
    # so a push does not repeat the finding
    repo = github.repo
    repo.write("shop/checkout.py", CHECKOUT_V2 + "\n\ndef refund(cart):\n    return 0\n")
    github.pulls[7].head = repo.commit("Add refunds")
    assert review_pull_request(run, REPO, INSTALLATION, 7) == "posted"
    assert github.reviews[-1]["comments"] == []


def test_a_review_whose_comments_went_into_its_body_is_reconciled_with_them(
    run: Runtime, github: FakeGitHub
) -> None:
    github.fail_next("POST", "/pulls/7/reviews", [422])
    github.fail_next("POST", "/pulls/7/reviews", [502], apply=True)
    with pytest.raises(GitHubError, match="HTTP 502"):
        review_pull_request(run, REPO, INSTALLATION, 7)
    assert review_pull_request(run, REPO, INSTALLATION, 7) == "reconciled"
    assert reviews_in_db(run.engine)[0][2:] == ("posted", github.reviews[0]["id"], 1)


def test_diff_too_large_for_github_is_rebuilt_from_files(run: Runtime, github: FakeGitHub) -> None:
    github.diff_too_large = True
    assert review_pull_request(run, REPO, INSTALLATION, 7) == "posted"
    assert any(p.endswith("/pulls/7/files") for _, p in github.requests)
    assert github.reviews[0]["comments"][0]["line"] == 7


def test_review_command_needs_write_access_and_reacts(run: Runtime, github: FakeGitHub) -> None:
    assert run_command(run, REPO, INSTALLATION, 7, "review", "mallory", 555) == "refused"
    assert github.reviews == [] and github.reactions == []
    github.permissions["maintainer"] = "write"
    assert run_command(run, REPO, INSTALLATION, 7, "review", "maintainer", 556) == "posted"
    assert github.reactions == [(556, "eyes")]


def test_check_run_reports_the_review_when_enabled(run: Runtime, github: FakeGitHub) -> None:
    checked = Runtime(run.settings.model_copy(update={"github_check_runs": True}), run.engine)
    assert review_pull_request(checked, REPO, INSTALLATION, 7) == "posted"
    [check] = github.check_runs
    assert check["head_sha"] == github.pulls[7].head
    assert (check["status"], check["conclusion"]) == ("completed", "neutral")
    assert check["output"]["summary"].startswith("1 inline comment.")


def test_a_check_run_that_could_not_be_finished_is_finished_by_the_retry(
    run: Runtime, github: FakeGitHub
) -> None:
    """The review is posted but GitHub fails finishing its check run: the job's retry
    finds the review, posts nothing again, and finishes the check (it was left
    in progress: "already reviewed" returned before any check)."""
    checked = Runtime(run.settings.model_copy(update={"github_check_runs": True}), run.engine)
    github.fail_next("PATCH", "/check-runs/500", [502] * 5)
    with pytest.raises(Exception, match="502"):
        review_pull_request(checked, REPO, INSTALLATION, 7)
    assert [c["status"] for c in github.check_runs] == ["in_progress"]
    assert review_pull_request(checked, REPO, INSTALLATION, 7) == "reconciled"
    assert len(github.reviews) == 1
    assert [c["status"] for c in github.check_runs][-1] == "completed"
    assert reviews_in_db(run.engine)[0][2] == "posted"


def test_rate_limits_and_read_errors_are_retried(run: Runtime, github: FakeGitHub) -> None:
    github.fail_next("GET", "/pulls/7", [429])  # secondary rate limit with retry-after: 1
    github.fail_next("GET", "/contents/shop/checkout.py", [502])
    assert review_pull_request(run, REPO, INSTALLATION, 7) == "posted"
    assert len(github.reviews) == 1


def test_an_answer_in_the_wrong_shape_is_a_failed_review_not_an_empty_one(
    run: Runtime, github: FakeGitHub, fake_openai: FakeOpenAI
) -> None:
    wrong = '{"title": "Fix", "description": "Looks fine", "type_of_issue": "none"}'
    fake_openai.chat_reply = lambda body: wrong
    with pytest.raises(ReviewFormatError, match="did not follow the review format, twice"):
        review_pull_request(run, REPO, INSTALLATION, 7)
    assert github.reviews == []  # nothing posted
    assert reviews_in_db(run.engine) == [(7, github.pulls[7].head, "failed", None, 0)]
    asked = [
        b["messages"] for b in fake_openai.bodies(CHAT) if b["messages"][0]["role"] == "system"
    ]
    assert len(asked) == 2 and asked[1][-1]["content"] == REPAIR  # asked again, once
    assert not is_transient(ReviewFormatError())  # the job fails in one run


def review_costs(engine: Engine) -> tuple[tuple[object, ...], list[tuple[object, ...]]]:
    with engine.connect() as conn:
        review = conn.execute(
            text(
                "SELECT status, comment_count, model, prompt_tokens > 0, completion_tokens > 0,"
                " finished_at >= created_at FROM reviews"
            )
        ).one()
        usage = conn.execute(
            text(
                "SELECT purpose, model, calls, input_tokens FROM model_usage"
                " WHERE purpose = 'review' ORDER BY model"
            )
        ).all()
    return tuple(review), [tuple(u) for u in usage]


def test_a_review_records_its_model_tokens_comments_and_latency(
    run: Runtime, github: FakeGitHub
) -> None:
    assert review_pull_request(run, REPO, INSTALLATION, 7) == "posted"
    review, usage = review_costs(run.engine)
    assert review == ("posted", 1, run.settings.review_model, True, True, True)
    [(purpose, model, calls, tokens)] = usage
    assert (purpose, model, calls) == ("review", run.settings.review_model, 1) and tokens > 0


def test_tokens_of_an_attempt_that_failed_to_post_are_still_counted(
    run: Runtime, github: FakeGitHub
) -> None:
    github.fail_next("POST", "/pulls/7/reviews", [502])  # GitHub did not create it
    with pytest.raises(GitHubError, match="HTTP 502"):
        review_pull_request(run, REPO, INSTALLATION, 7)
    assert review_costs(run.engine)[1][0][2] == 1  # paid for, though nothing was posted
    assert review_pull_request(run, REPO, INSTALLATION, 7) == "posted"
    review, [(_, _, calls, _)] = review_costs(run.engine)
    assert calls == 2 and review[0] == "posted"

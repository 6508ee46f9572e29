"""What a team sees on its pull request, through signed webhooks on the real app and
workers, against the fake GitHub (every body it accepts checked against GitHub's OpenAPI
description) and a fake model: the walkthrough and the cost, multi-line suggestions,
``/describe``, every file of a large PR, trigger filters, the merge gate, threads that
resolve themselves, and budgets."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine

from app.config import Settings
from tests.conftest import GITHUB_INSTALLATION, GITHUB_REPO
from tests.fakes.github_server import FakeGitHub
from tests.fakes.openai_server import CHAT, FakeOpenAI
from tests.shop_repo import CHECKOUT_V2
from tests.support.app import jobs_left, pr_event, send, serving, wait_for
from tests.support.models import COUPON_DESCRIPTION, finding, model
from tests.webhooks import payload

FIX = (
    "    if coupon is not None:\n"
    "        total = apply_discount(total, coupon.fraction * 100)\n"
    "    return format_price(total)"
)


def review_prompts(fake: FakeOpenAI) -> list[str]:
    return [
        b["messages"][-1]["content"]
        for b in fake.bodies(CHAT)
        if "You are reviewbot, a careful senior engineer" in b["messages"][0]["content"]
    ]


def comment_event(body: str, comment_id: int, user: str = "maintainer") -> dict[str, Any]:
    return payload(
        "issue_comment.created",
        **{
            "repository.full_name": GITHUB_REPO,
            "installation.id": GITHUB_INSTALLATION,
            "issue.number": 7,
            "issue.pull_request": {"url": "x"},
            "comment.id": comment_id,
            "comment.body": body,
            "comment.user.login": user,
            "comment.user.type": "User",
        },
    )


def configure(github: FakeGitHub, toml: str) -> None:
    """A ``.reviewbot.toml`` on the default branch (the PR's head does not move)."""
    github.repo.write(".reviewbot.toml", toml).commit("Configure reviewbot")


def test_walkthrough_cost_and_a_three_line_suggestion(
    github_settings: Settings, engine: Engine, github: FakeGitHub, fake_openai: FakeOpenAI
) -> None:
    repo = github.repo
    repo.write("shop/notes.py", "def note(text):\n    return text.strip()\n")
    repo.write("docs/coupons.md", "# Coupons\n")
    github.pulls[7].head = repo.commit("Coupons with notes and docs")
    fake_openai.chat_reply = model([finding(8, start_line=6, suggestion=FIX)])
    with serving(github_settings, engine, worker=True) as base:
        send(base, "pull_request", pr_event("opened", github.pulls[7].head))
        wait_for(lambda: len(github.reviews) == 1)
    [review] = github.reviews
    [posted] = review["comments"]
    assert (posted["start_line"], posted["start_side"], posted["line"]) == (6, "RIGHT", 8)
    assert f"```suggestion\n{FIX}\n```" in posted["body"]
    stored = github.review_comments[0]
    assert (stored["start_line"], stored["line"]) == (6, 8)
    body = review["body"]
    for path in ("shop/checkout.py", "shop/notes.py", "docs/coupons.md"):
        assert f"| `{path}` |" in body  # a walkthrough row per file
    assert "model's phrase for shop/checkout.py" in body
    assert "This review: " in body and "completion tokens of `gpt-4o`" in body


def test_describe_appends_keeps_the_authors_text_and_updates_in_place(
    github_settings: Settings, engine: Engine, github: FakeGitHub, fake_openai: FakeOpenAI
) -> None:
    github.permissions["maintainer"] = "write"
    github.labels = ["bug", "feature", "risk: low"]
    configure(github, '[review]\ndescribe = "append"\nlabels = true\n')
    first = COUPON_DESCRIPTION
    fake_openai.chat_reply = model([], first)
    with serving(github_settings, engine, worker=True) as base:
        send(base, "issue_comment", comment_event("/describe", 601))
        wait_for(lambda: "reviewbot:describe:end" in github.pulls[7].body)
        once = github.pulls[7].body
        fake_openai.chat_reply = model([], {**first, "summary": "Second run's summary."})
        send(base, "issue_comment", comment_event("/describe", 602))
        wait_for(lambda: "Second run" in github.pulls[7].body)
        wait_for(lambda: jobs_left(engine) == 0)
    twice = github.pulls[7].body
    author = "Uses the discount helper from pricing."
    assert once.startswith(author) and twice.startswith(author)
    assert twice.count("reviewbot:describe:start") == 1
    assert "Checkout applies" not in twice  # replaced in place, not appended again
    assert "**Type:** feature" in twice and "applies coupons" in twice
    assert github.pulls[7].labels == ["feature"]  # only labels the repository has


def test_every_file_of_a_large_pr_is_reviewed_within_the_call_bound(
    github_settings: Settings, engine: Engine, github: FakeGitHub, fake_openai: FakeOpenAI
) -> None:
    repo = github.repo
    for i in range(12):
        body = "\n".join(f"    total_{j} = price * {i + j}  # step {j}" for j in range(30))
        repo.write(f"shop/rules/rule_{i}.py", f"def rule_{i}(price):\n{body}\n    return price\n")
    github.pulls[7].head = repo.commit("Twelve pricing rules")
    configure(github, "[review]\nmax_review_calls = 4\n")
    fake_openai.chat_reply = model([])
    settings = github_settings.model_copy(update={"diff_token_budget": 2000})
    with serving(settings, engine, worker=True) as base:
        send(base, "pull_request", pr_event("opened", github.pulls[7].head))
        wait_for(lambda: len(github.reviews) == 1)
    prompts = review_prompts(fake_openai)
    assert 1 < len(prompts) <= 4
    diff_size = sum(len(p) for p in prompts)
    assert diff_size > 4 * 2000 * 3  # four times the budget and more, in characters
    body = github.reviews[0]["body"]
    assert f"in {len(prompts)} model calls" in body and "Not reviewed" not in body
    for i in range(12):
        assert any(f"### shop/rules/rule_{i}.py" in p for p in prompts)


def test_a_dependabot_pr_is_skipped_until_someone_asks(
    github_settings: Settings, engine: Engine, github: FakeGitHub, fake_openai: FakeOpenAI
) -> None:
    github.pulls[7].author = "dependabot[bot]"
    github.permissions["maintainer"] = "write"
    fake_openai.chat_reply = model([finding(8)])
    with serving(github_settings, engine, worker=True) as base:
        send(base, "pull_request", pr_event("opened", github.pulls[7].head))
        wait_for(lambda: jobs_left(engine) == 0)
        assert github.reviews == [] and github.comments == []  # nothing posted
        send(base, "issue_comment", comment_event("/review", 611))
        wait_for(lambda: len(github.reviews) == 1)
    assert github.reactions == [(611, "eyes")]


def test_the_merge_gate_fails_on_a_major_finding_and_passes_without(
    github_settings: Settings, engine: Engine, github: FakeGitHub, fake_openai: FakeOpenAI
) -> None:
    configure(github, '[review]\ngate = "major"\n')
    fake_openai.chat_reply = model([finding(8, "major")])
    with serving(github_settings, engine, worker=True) as base:
        send(base, "pull_request", pr_event("opened", github.pulls[7].head))
        wait_for(lambda: any(r.get("conclusion") for r in github.check_runs))
        [failed] = github.check_runs
        assert failed["conclusion"] == "failure"
        assert "Finding on line eight" in str(failed["output"])
        github.resolved_threads.add(github.review_comments[0]["id"])  # a person resolved it
        repo = github.repo
        repo.write("shop/checkout.py", CHECKOUT_V2.replace("coupon.fraction", "coupon.pct"))
        github.pulls[7].head = repo.commit("Rename")
        fake_openai.chat_reply = model([finding(7, "minor")])
        send(base, "pull_request", pr_event("synchronize", github.pulls[7].head))
        wait_for(lambda: len([r for r in github.check_runs if r.get("conclusion")]) == 2)
    assert github.check_runs[1]["conclusion"] == "success"


def test_a_fixed_finding_resolves_itself_and_a_discussed_one_stays_open(
    github_settings: Settings, engine: Engine, github: FakeGitHub, fake_openai: FakeOpenAI
) -> None:
    fake_openai.chat_reply = model([finding(7, "major"), finding(8, "minor")])
    with serving(github_settings, engine, worker=True) as base:
        send(base, "pull_request", pr_event("opened", github.pulls[7].head))
        wait_for(lambda: len(github.reviews) == 1)
        on_7, on_8 = github.review_comments[:2]
        github.add_reply(on_8["id"], "I think this is on purpose.", "octocat")
        repo = github.repo
        fixed = CHECKOUT_V2.replace(
            "total = apply_discount(total, coupon.fraction)",
            "total = apply_discount(total, coupon.fraction * 100)",
        ).replace("return format_price(total)", "return format_price(round(total, 2))")
        repo.write("shop/checkout.py", fixed)
        github.pulls[7].head = repo.commit("Percent, and round")
        fake_openai.chat_reply = model([])
        send(base, "pull_request", pr_event("synchronize", github.pulls[7].head))
        wait_for(lambda: on_7["id"] in github.resolved_threads)
        wait_for(lambda: jobs_left(engine) == 0)
    assert on_8["id"] not in github.resolved_threads  # a person replied: left to people
    [said] = [c for c in github.review_comments if c.get("in_reply_to_id") == on_7["id"]]
    assert said["body"].startswith(f"Fixed in {github.pulls[7].head[:12]}.")


def test_over_the_daily_budget_one_note_and_nothing_more(
    github_settings: Settings, engine: Engine, github: FakeGitHub, fake_openai: FakeOpenAI
) -> None:
    fake_openai.chat_reply = model([finding(8)])
    settings = github_settings.model_copy(update={"budget_tokens_per_day": 10})
    with serving(settings, engine, worker=True) as base:
        send(base, "pull_request", pr_event("opened", github.pulls[7].head))
        wait_for(lambda: len(github.reviews) == 1)  # nothing spent yet: it goes ahead
        for i in range(2):
            github.repo.write("shop/notes.py", f"def note(text):\n    return text * {i}\n")
            github.pulls[7].head = github.repo.commit(f"Note {i}")
            send(base, "pull_request", pr_event("synchronize", github.pulls[7].head))
            wait_for(lambda: jobs_left(engine) == 0)
    notes = [c for c in github.comments if "reviewbot:budget=day:" in c["body"]]
    assert len(notes) == 1 and "daily budget of 10 model tokens" in notes[0]["body"]
    assert len(github.reviews) == 1

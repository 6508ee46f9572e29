"""Pure parts of what the bot does on a PR: trigger filters, the merge gate, budgets and
cost, the description and its merge with the author's text, threads that resolve
themselves, the walkthrough, and the split of a large PR."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.config import Settings
from app.diff.changed import changed_functions
from app.diff.parse import parse_diff
from app.forge.models import ReviewComment
from app.github import records
from app.llm.tokens import estimate_tokens
from app.review.budget import budget_note, cost_line, exceeded, per_pr_limit
from app.review.config import parse_review_config
from app.review.describe import Description, author_text, merged_body, parse_description, section
from app.review.gate import Finding, blocking, gate_outcome
from app.review.groups import plan_groups, related_files
from app.review.resolve import (
    already_answered,
    commented_lines,
    parse_verdict,
    people_allow,
    resolved_reply,
    still_there,
)
from app.review.triggers import PullFacts, skip_reason
from app.review.walkthrough import FileChange, walkthrough, walkthrough_markdown

SETTINGS = Settings()
FACTS = PullFacts("octocat", ("enhancement",), "main", "coupons", "Apply coupons at checkout")


def _config(text: str = "") -> object:
    return parse_review_config("[review]\n" + text, "test")


@pytest.mark.parametrize(
    ("author", "toml", "skipped"),
    [
        ("dependabot[bot]", "", True),
        ("renovate[bot]", "", True),
        ("Renovate", "", True),  # logins are not case-sensitive
        ("octocat", "", False),
        ("dependabot[bot]", "ignore_authors = []", False),  # a repository that wants them
        ("mallory", 'ignore_authors = ["mall*"]', True),
        ("xbot", "", False),  # `*[bot]` means the suffix, brackets included
    ],
)
def test_authors_are_filtered_bots_by_default(author: str, toml: str, skipped: bool) -> None:
    facts = PullFacts(author, (), "main", "x", "Title")
    assert (skip_reason(facts, _config(toml), SETTINGS) is not None) == skipped  # type: ignore[arg-type]


def test_labels_branches_and_title_filter() -> None:
    assert skip_reason(FACTS, _config('ignore_labels = ["Enhancement"]'), SETTINGS) == (  # type: ignore[arg-type]
        "label 'enhancement' is in ignore_labels"
    )
    assert skip_reason(FACTS, _config('ignore_branches = ["coup*"]'), SETTINGS) == (  # type: ignore[arg-type]
        "head branch coupons matches ignore_branches"
    )
    assert skip_reason(FACTS, _config('ignore_branches = ["release/*"]'), SETTINGS) is None  # type: ignore[arg-type]
    assert skip_reason(FACTS, _config('ignore_title = "^Apply"'), SETTINGS) is not None  # type: ignore[arg-type]
    assert skip_reason(FACTS, _config('ignore_title = "^WIP"'), SETTINGS) is None  # type: ignore[arg-type]


def test_a_bad_title_pattern_is_a_config_error() -> None:
    with pytest.raises(Exception, match=r"review.ignore_title is not a regular expression"):
        _config('ignore_title = "("')


FINDINGS = [
    Finding("a.py", 3, "major", "Open major"),
    Finding("a.py", 4, "critical", "Resolved critical", resolved=True),
    Finding("a.py", 5, "critical", "Rejected critical", rejected=True),
    Finding("a.py", 6, "minor", "Open minor"),
]


def test_the_gate_counts_open_findings_at_or_above_its_severity() -> None:
    assert [f.title for f in blocking("major", FINDINGS)] == ["Open major"]
    assert [f.title for f in blocking("minor", FINDINGS)] == ["Open major", "Open minor"]
    assert blocking("off", FINDINGS) == []
    conclusion, title, summary = gate_outcome("major", FINDINGS)
    assert (conclusion, title) == ("failure", "1 open finding at major or above")
    assert "`a.py:3` Open major" in summary
    assert gate_outcome("critical", FINDINGS)[0] == "success"
    assert gate_outcome("off", FINDINGS)[0] == "neutral"


NOW = datetime(2026, 12, 3, 20, 30, tzinfo=UTC)


NO_PR_BUDGET = per_pr_limit(None, None)


def test_budgets_say_which_and_when_they_reset() -> None:
    assert exceeded(900, 1000, 5000, NO_PR_BUDGET, NOW) is None
    day = exceeded(1000, 1000, 0, NO_PR_BUDGET, NOW)
    assert day is not None and day.key == "day:2026-12-03"
    note = budget_note(day, NOW)
    assert "daily budget of 1,000 model tokens" in note and "in about 4 h" in note
    assert "REVIEWBOT_BUDGET_TOKENS_PER_DAY" in note
    pr = exceeded(10, 1000, 600, per_pr_limit(500, None), NOW)
    assert pr is not None and pr.key == "pr:pr"
    assert "It does not reset" in budget_note(pr, NOW)


def test_the_budget_note_names_where_the_limit_was_set() -> None:
    """Set by the deployment's environment with no file in the repository, the note must
    not send people to a `.reviewbot.toml` that does not exist."""
    from_env = exceeded(0, None, 600, per_pr_limit(None, 500), NOW)
    assert from_env is not None
    said = budget_note(from_env, NOW)
    assert "`REVIEWBOT_BUDGET_TOKENS_PER_PR`" in said and ".reviewbot.toml" not in said
    from_file = exceeded(0, None, 600, per_pr_limit(500, 100_000), NOW)
    assert from_file is not None and from_file.limit == 500
    assert "`budget_tokens_per_pr` in this repository's `.reviewbot.toml`" in budget_note(
        from_file, NOW
    )


def test_the_cost_of_a_review_in_tokens_and_dollars() -> None:
    prices = {"gpt-4o": (2.5, 10.0)}
    assert cost_line("gpt-4o", 10_000, 1_000, prices, 2) == (
        "10,000 prompt and 1,000 completion tokens of `gpt-4o` in 2 calls, about $0.0350."
    )
    assert "no price known" in cost_line("local-llama", 10, 1, prices)


AUTHOR = "Fixes the coupon rounding.\n\nCloses #12."


def test_append_keeps_the_author_and_replaces_its_own_section() -> None:
    first = section(Description("Round coupons", "bug fix", "Rounds."), [])
    once = merged_body(AUTHOR, first, "append")
    assert once.startswith(AUTHOR) and "**Type:** bug fix" in once
    second = section(Description("Round coupons", "bug fix", "Rounds to cents."), [])
    twice = merged_body(once + "\n\nEdited later by the author.", second, "append")
    assert twice.count("reviewbot:describe:start") == 1 and "Rounds to cents." in twice
    assert author_text(twice) == AUTHOR + "\n\nEdited later by the author."


def test_replace_keeps_the_author_below_and_never_loses_it() -> None:
    bot = section(Description("", "feature", "Adds coupons."), [])
    replaced = merged_body(AUTHOR, bot, "replace")
    assert replaced.startswith("<!-- reviewbot:describe:start -->")
    assert author_text(replaced) == AUTHOR
    assert merged_body(replaced, bot, "replace") == replaced  # stable on a second run
    assert author_text(merged_body(replaced, bot, "append")) == AUTHOR


def test_a_description_keeps_only_labels_the_repository_has() -> None:
    found = parse_description(
        'Here: {"title": "T", "type": "Feature", "summary": "S", "labels": ["BUG", "new"]}',
        ["bug", "enhancement"],
    )
    assert found is not None and (found.type, found.labels) == ("feature", ["bug"])
    assert parse_description("no JSON here", ["bug"]) is None
    made_up = parse_description('{"summary": "S", "type": "party"}', [])
    assert made_up is not None and made_up.type == ""


def _reply(login: str, body: str, kind: str = "User") -> ReviewComment:
    # as GitHub lists a reply; bots by account type or the [bot] suffix
    return records.review_comment(
        {"id": 7, "user": {"login": login, "type": kind}, "body": body, "in_reply_to_id": 1}
    )


def test_a_thread_people_replied_to_is_theirs_unless_they_say_resolve() -> None:
    assert people_allow([])
    assert people_allow([_reply("reviewbot[bot]", "An answer", "Bot")])
    assert not people_allow([_reply("octocat", "I disagree")])
    assert people_allow([_reply("octocat", "I disagree"), _reply("octocat", "  /resolve ")])
    done = [_reply("reviewbot[bot]", resolved_reply("a" * 40, "Fixed."), "Bot")]
    assert already_answered(done) and not already_answered([])


def test_the_lines_commented_on_are_gone_when_changed_or_deleted() -> None:
    before = "def f(x):\n    total = x.fraction\n    return total\n"
    lines = commented_lines(before, 2, 3)
    assert lines == ["    total = x.fraction", "    return total"]
    assert still_there(lines, "def f(x):\n        total = x.fraction\n\n    return total\n")
    assert not still_there(lines, "def f(x):\n    total = x.fraction * 100\n    return total\n")
    assert not still_there(lines, "")
    assert parse_verdict('{"still_applies": false, "why": "Fixed."}') == (False, "Fixed.")
    assert parse_verdict('{"applies": "maybe"}') is None


DIFF = """diff --git a/shop/a.py b/shop/a.py
--- a/shop/a.py
+++ b/shop/a.py
@@ -1,2 +1,5 @@
+from shop.b import double
+
 def total(x):
-    return x
+    y = double(x)
+    return y
diff --git a/shop/b.py b/shop/b.py
--- /dev/null
+++ b/shop/b.py
@@ -0,0 +1,2 @@
+def double(x):
+    return x * 2
diff --git a/yarn.lock b/yarn.lock
--- a/yarn.lock
+++ b/yarn.lock
@@ -1 +1 @@
-a
+b
"""
SOURCES = {
    ("shop/a.py", "old"): b"def total(x):\n    return x\n",
    ("shop/a.py", "new"): b"from shop.b import double\n\ndef total(x):\n    y = double(x)\n"
    b"    return y\n",
    ("shop/b.py", "new"): b"def double(x):\n    return x * 2\n",
}


def test_the_walkthrough_has_a_row_per_file_and_uses_the_models_words() -> None:
    diffs = parse_diff(DIFF)
    changed = changed_functions(diffs, lambda p, s: SOURCES.get((p, s)))
    rows = walkthrough(diffs, changed, [{"path": "shop/b.py", "change": "adds b", "theme": "m"}])
    assert [r.path for r in rows] == ["shop/a.py", "shop/b.py", "yarn.lock"]
    assert rows[0].change == "changes `total`" and rows[1].change == "adds b"
    assert rows[2].change == "+1 -1 lines"
    table = walkthrough_markdown(rows)
    assert table.splitlines()[2] == "| `shop/a.py` | changes `total` |"
    many = [FileChange(f"f{i}.py", "x", "theme A" if i % 2 else "theme B") for i in range(10)]
    assert "| **theme A** (5) | |" in walkthrough_markdown(many)


def test_a_large_pr_is_split_into_related_groups_within_the_call_bound() -> None:
    diffs = parse_diff(DIFF)
    changed = changed_functions(diffs, lambda p, s: SOURCES.get((p, s)))
    assert [[d.path for d in g] for g in related_files(diffs[:2], changed)] == [
        ["shop/a.py", "shop/b.py"]  # total uses double: reviewed together
    ]
    whole = plan_groups(diffs, changed, 10_000, 4, estimate_tokens)
    assert [[d.path for d in g] for g in whole.groups] == [["shop/a.py", "shop/b.py", "yarn.lock"]]
    split = plan_groups(diffs, changed, 40, 4, estimate_tokens)
    assert sorted(d.path for g in split.groups for d in g) == ["shop/a.py", "shop/b.py"]
    assert split.not_reviewed == ["yarn.lock: lock or generated file"]
    bounded = plan_groups(diffs, changed, 40, 1, estimate_tokens)
    assert len(bounded.groups) == 1 and any(
        "over max_review_calls (1 calls)" in why for why in bounded.not_reviewed
    )

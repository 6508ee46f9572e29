"""Which tool findings a review keeps (on changed lines, by severity, once each), how the
model's verdicts fuse with them, and which repository configurations a tool may use."""

from __future__ import annotations

from dataclasses import replace

from app.diff.parse import parse_diff
from app.review.comments import validate_comments
from app.review.feedback import Rejected, title_key
from app.review.tool_findings import fuse, render_tool_findings, tool_comment, tools_markdown
from app.tools.catalog import tool
from app.tools.findings import ToolFinding, at_least, deduplicated, on_changed_lines
from app.tools.stage import ToolReport, ToolRun

DIFF = """\
diff --git a/deploy.sh b/deploy.sh
--- a/deploy.sh
+++ b/deploy.sh
@@ -1,4 +1,4 @@
 #!/bin/sh
 name=$1
-rm -rf "$name"/tmp
+rm -rf $name/tmp
 echo done
"""
SC2086 = ToolFinding(
    "shellcheck",
    "SC2086",
    "Double quote to prevent globbing and word splitting.",
    "deploy.sh",
    3,
    3,
    "minor",
    "Double quote to prevent globbing and word splitting.",
    "https://www.shellcheck.net/wiki/SC2086",
    'rm -rf "$name"/tmp',
)


def test_only_findings_on_added_lines_or_near_them_are_kept() -> None:
    diffs = parse_diff(DIFF)
    before = replace(SC2086, line=4, end_line=4)  # an unchanged line
    assert on_changed_lines([SC2086, before], diffs) == [SC2086]
    assert on_changed_lines([SC2086, before], diffs, context=1) == [SC2086, before]
    elsewhere = replace(SC2086, path="other.sh")
    assert on_changed_lines([elsewhere], diffs, context=5) == []


def test_severity_and_repeats() -> None:
    nit = replace(SC2086, severity="nit", rule="SC2001")
    assert at_least([SC2086, nit], "minor") == [SC2086]
    assert at_least([SC2086, nit], "nit") == [SC2086, nit]
    secret = replace(SC2086, tool="detect-secrets", severity="critical")
    assert deduplicated([nit, SC2086, secret, SC2086]) == [secret, SC2086, nit]


def test_a_finding_is_a_comment_naming_its_tool_rule_and_fix() -> None:
    comment = tool_comment(SC2086, "The path is a user's argument.")
    [checked] = validate_comments([comment], parse_diff(DIFF), 10).comments
    assert (checked.path, checked.line, checked.severity) == ("deploy.sh", 3, "minor")
    assert checked.title.startswith("shellcheck SC2086: Double quote")
    assert "[`shellcheck` SC2086](https://www.shellcheck.net/wiki/SC2086)" in checked.body
    assert "**Why it matters here:** The path is a user's argument." in checked.body
    assert checked.suggestion == 'rm -rf "$name"/tmp'


def test_a_rejected_rule_is_not_posted_again_anywhere_in_the_repository() -> None:
    """A 👎 on one SC2086 turns down SC2086 in another file and another message."""
    rejected = Rejected.of([("f" * 16, title_key(str(tool_comment(SC2086)["title"])))])
    elsewhere = tool_comment(replace(SC2086, message="Another place."))
    assert validate_comments([elsewhere], parse_diff(DIFF), 10, (), rejected.rejects).dropped
    other_rule = tool_comment(replace(SC2086, rule="SC2115", title="Use ${var:?} here."))
    assert validate_comments([other_rule], parse_diff(DIFF), 10, (), rejected.rejects).comments


def test_the_models_verdicts_fuse_with_the_findings() -> None:
    secret = replace(SC2086, tool="detect-secrets", rule="AWS Access Key", line=2, end_line=2)
    mine = {"path": "deploy.sh", "line": 3, "title": "Unquoted", "body": "Quote it."}
    elsewhere = {"path": "deploy.sh", "line": 1, "title": "Shebang", "body": "Use bash."}
    fused = fuse(
        [SC2086, secret],
        [
            {
                "id": "T1",
                "verdict": "confirm",
                "why": "A space in the name deletes the wrong tree.",
            },
            {"id": "T2", "verdict": "dismiss", "why": "AWS's documented example key."},
        ],
        [mine, elsewhere],
    )
    [posted] = fused.tool_comments
    assert (
        posted["title"] == "shellcheck SC2086: Double quote to prevent globbing and word splitting."
    )
    assert "A space in the name deletes the wrong tree." in str(posted["body"])
    assert fused.model_comments == [elsewhere]  # the model's own on SC2086's line gave way
    assert fused.dismissed == [
        "detect-secrets AWS Access Key at deploy.sh:2: AWS's documented example key."
    ]
    # no answer from the model (none asked, or it left one out): posted as proven
    assert len(fuse([SC2086], [], []).tool_comments) == 1


def test_the_prompt_lists_findings_by_their_review_wide_id() -> None:
    said = render_tool_findings([(4, SC2086)])
    assert said == (
        "T5 deploy.sh:3 [shellcheck SC2086, minor] Double quote to prevent globbing and"
        " word splitting."
    )


def test_the_review_body_says_what_each_tool_did() -> None:
    report = ToolReport(
        [SC2086],
        [
            ToolRun("shellcheck", 1, 1, 0.1, config=".shellcheckrc"),
            ToolRun("ruff", 2, 0, 60.0, "stopped at its time limit (60 s)"),
        ],
        ["logo.sh: binary"],
    )
    said = tools_markdown(report, ["detect-secrets AWS Access Key at keys.txt:1: a fixture"])
    assert "**Tools that did not finish**" in said
    assert "- ruff: stopped at its time limit (60 s)" in said
    assert "- `shellcheck`: 1 file, 1 finding on the changed lines (configuration:" in said
    assert "- not checked: logo.sh: binary" in said
    assert "- dismissed by the review: detect-secrets AWS Access Key" in said
    assert tools_markdown(ToolReport(), []) == ""


def test_configurations_that_could_reach_outside_are_refused() -> None:
    ruff, yamllint = tool("ruff"), tool("yamllint")
    assert ruff.config_safe("ruff.toml", "line-length = 100\n")
    assert not ruff.config_safe("ruff.toml", 'extend = "../base.toml"\n')
    assert not ruff.config_safe("pyproject.toml", '[tool.ruff]\n  extend = "/etc/x.toml"\n')
    assert yamllint.config_safe(".yamllint", "extends: relaxed\nrules: {}\n")
    assert not yamllint.config_safe(".yamllint", "extends: ../../shared.yaml\n")
    shellcheck = tool("shellcheck")
    assert shellcheck.config_safe(".shellcheckrc", "disable=SC2086\n")
    assert not shellcheck.config_safe(".shellcheckrc", "external-sources=true\n")
    assert not shellcheck.config_safe(".shellcheckrc", "source-path=/etc\n")
    assert shellcheck.checks("scripts/deploy.sh") and not tool("ruff").checks("a.sh")
    assert tool("hadolint").checks("docker/Dockerfile.prod")


def test_a_findings_fingerprint_does_not_change_with_the_models_words() -> None:
    """A `/review` of the same head asks the model again, which words its reason anew:
    the finding is still the one posted before, and is not posted twice."""
    first = tool_comment(SC2086, "Spaces in the name split it.")
    again = tool_comment(SC2086, "A name with a space\\ndeletes another folder.")
    posted = validate_comments([first], parse_diff(DIFF), 10).comments[0].fingerprint
    assert validate_comments([again], parse_diff(DIFF), 10, [posted]).comments == []
    other = tool_comment(replace(SC2086, message="Quote it in line 9 too."))
    assert validate_comments([other], parse_diff(DIFF), 10, [posted]).comments


def test_a_dismissal_the_model_wrote_is_made_inert_in_the_review_body() -> None:
    said = tools_markdown(
        ToolReport([], [ToolRun("ruff", 1, 0, 0.1)]),
        ["ruff F821 at a.py:2: @maintainers <img src=x onerror=alert(1)> fixture"],
    )
    assert "@maintainers" not in said and "<img" not in said
    assert "@\u200bmaintainers" in said and "&lt;img" in said

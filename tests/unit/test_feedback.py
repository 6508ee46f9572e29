"""What counts as rejected or accepted, and which later findings a rejection covers."""

import pytest

from app.review.comments import ReviewComment, validate_comments
from app.review.feedback import Rejected, finding_marker, finding_of, title_key, title_of, verdict


@pytest.mark.parametrize(
    ("up", "down", "resolved", "expected"),
    [
        (0, 1, False, "rejected"),
        (0, 2, True, "rejected"),  # resolved after a 👎: dismissed
        (1, 1, False, "accepted"),
        (1, 0, False, "accepted"),
        (0, 0, True, "accepted"),
        (0, 0, False, "none"),
    ],
)
def test_verdict(up: int, down: int, resolved: bool, expected: str) -> None:
    assert verdict(up, down, resolved) == expected


def test_the_bots_inline_body_gives_back_its_fingerprint_and_title() -> None:
    body = "**major: Off by &lt;one@\u200bhere 2**\n\nBody.\n\n" + finding_marker(
        "0123456789abcdef"
    )
    assert finding_of(body) == "0123456789abcdef"
    assert finding_of("a person's comment") is None
    assert title_of(body) == "Off by &lt;one@\u200bhere 2"
    assert title_key(title_of(body)) == "off by one here"


def test_a_rejection_covers_the_same_finding_and_the_same_title_elsewhere() -> None:
    first = ReviewComment("a.py", 3, "RIGHT", "major", "Off by one", "Loop ends early.")
    moved = ReviewComment("b.py", 9, "RIGHT", "minor", "Off-by-one!", "Different words.")
    other = ReviewComment("a.py", 3, "RIGHT", "major", "Null check", "Loop ends early.")
    rejected = Rejected.of([(first.fingerprint, title_key(first.title))])
    assert rejected.rejects(first) and rejected.rejects(moved)
    assert not rejected.rejects(other)
    assert not Rejected.of([("f" * 16, "")]).rejects(other)  # an empty title matches nothing


def test_rejected_findings_are_dropped_before_the_cap() -> None:
    from app.diff.parse import parse_diff

    diff = parse_diff(
        b"diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,1 +1,3 @@\n x\n+y\n+z\n"
    )
    raw = [
        {"path": "a.py", "line": 2, "severity": "major", "title": "Off by one", "body": "B."},
        {"path": "a.py", "line": 3, "severity": "minor", "title": "Name", "body": "C."},
    ]
    rejected = Rejected(titles=frozenset({"off by one"}))
    kept = validate_comments(raw, diff, 1, rejected=rejected.rejects)
    assert [c.title for c in kept.comments] == ["Name"]
    assert kept.dropped == 1 and kept.moved_to_summary == []

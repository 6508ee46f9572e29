"""What a tool found, and which of its findings a review keeps: those on the lines the
change touched, at or above a severity, once each. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from app.diff.parse import FileDiff

#: Most severe first, as the review's own findings (``app.review.comments.Severity``).
SEVERITIES = ("critical", "major", "minor", "nit")


@dataclass(frozen=True)
class ToolFinding:
    """One finding of one tool on one range of lines of a changed file."""

    tool: str
    rule: str  # the tool's rule id: "F821", "SC2086", "DL3008", "key-duplicates"
    #: what the rule says, the same for every finding of the rule (a title a team's 👎
    #: turns down for the whole rule)
    title: str
    path: str
    line: int
    end_line: int
    severity: str  # one of SEVERITIES
    message: str  # this finding's own words
    url: str = ""  # the rule's documentation
    #: lines ``line..end_line`` as the tool would rewrite them (a suggestion), if it can
    fix: str | None = None

    @property
    def key(self) -> tuple[str, str, str, int, str]:
        return (self.tool, self.rule, self.path, self.line, self.message)


def on_changed_lines(
    findings: Iterable[ToolFinding], diffs: Sequence[FileDiff], context: int = 0
) -> list[ToolFinding]:
    """The findings that touch an added line of the diff (reviewdog's ``added``), or lie
    within ``context`` lines of one (``diff_context``)."""
    added = {d.path: d.added_lines for d in diffs}
    kept = []
    for finding in findings:
        lines = added.get(finding.path, frozenset())
        first, last = finding.line - context, max(finding.end_line, finding.line) + context
        if any(first <= line <= last for line in lines):
            kept.append(finding)
    return kept


def at_least(findings: Iterable[ToolFinding], severity: str) -> list[ToolFinding]:
    """The findings at ``severity`` or above."""
    bar = SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES) - 1
    return [f for f in findings if SEVERITIES.index(f.severity) <= bar]


def deduplicated(findings: Iterable[ToolFinding]) -> list[ToolFinding]:
    """Each (tool, rule, path, line, message) once, most severe first, then by place."""
    seen: dict[tuple[str, str, str, int, str], ToolFinding] = {}
    for finding in findings:
        seen.setdefault(finding.key, finding)
    return sorted(
        seen.values(), key=lambda f: (SEVERITIES.index(f.severity), f.path, f.line, f.tool)
    )


#: One edit of a file's text: (row, column, end row, end column, new text), 1-based, the
#: end column exclusive (ruff's and shellcheck's reports).
Edit = tuple[int, int, int, int, str]


def rewritten_lines(text: str, edits: Sequence[Edit]) -> tuple[int, int, str] | None:
    """The whole lines ``edits`` touch, as they read once applied: (first line, last
    line, their new text). None when an edit lies outside the text or edits overlap."""
    lines = text.split("\n")
    if not edits:
        return None
    first = min(e[0] for e in edits)
    last = max(e[2] for e in edits)
    if first < 1 or last > len(lines):
        return None
    block = "\n".join(lines[first - 1 : last])
    offsets = [0]
    for line in lines[first - 1 : last]:
        offsets.append(offsets[-1] + len(line) + 1)
    spans = []
    for row, col, end_row, end_col, content in edits:
        start = offsets[row - first] + col - 1
        end = offsets[end_row - first] + end_col - 1
        if not 0 <= start <= end <= len(block):
            return None
        spans.append((start, end, content))
    spans.sort()
    if any(a[1] > b[0] for a, b in pairwise(spans)):
        return None
    for start, end, content in reversed(spans):
        block = block[:start] + content + block[end:]
    return first, last, block

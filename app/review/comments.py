"""Review comments: parsed from the model, validated against the diff, fingerprinted. Pure.

GitHub refuses a review comment on a line outside the diff, so every comment is checked:
its line must be an added or context line of a hunk in that file. A comment a few lines
off is moved onto the nearest such line of the same hunk; anything else goes into the
review summary instead. Empty praise is dropped, repeats are merged, and at most
``max_comments`` survive, most severe first.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from app.diff.parse import FileDiff


class Severity(StrEnum):
    """How much a finding matters, most first (stored and shown as its text)."""

    CRITICAL = "critical"
    MAJOR = "major"
    MINOR = "minor"
    NIT = "nit"


SEVERITIES = tuple(s.value for s in Severity)
SNAP_DISTANCE = 3
_PRAISE = re.compile(
    r"^\W*(looks? good|lgtm|great( job| work)?|nice( work| job| change)?|well done"
    r"|good (job|work|change)|thanks|clean (code|change)|no issues?)\b",
    re.I,
)


@dataclass(frozen=True)
class ReviewComment:
    path: str
    line: int
    side: str
    severity: Severity
    title: str
    body: str
    suggestion: str | None = None
    #: the first line of a multi-line comment (its suggestion replaces start_line..line)
    start_line: int | None = None
    #: code shown as it is, not committable: a suggestion whose lines GitHub would refuse
    code: str | None = None

    @property
    def fingerprint(self) -> str:
        """Stable across pushes: path and normalised words of title and body, no numbers."""
        return fingerprint(self.path, self.title, self.body)

    def as_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "side": self.side,
            "severity": self.severity,
            "title": self.title,
            "body": self.body,
            "suggestion": self.suggestion,
            "start_line": self.start_line,
            "fingerprint": self.fingerprint,
        }


#: Opens the model's reason beside a tool's finding (``tool_findings.tool_comment``): it
#: is worded anew by each review, so the fingerprint leaves it out.
WHY_PREFIX = "**Why it matters here:**"
_WHY = re.compile(rf"\n\n{re.escape(WHY_PREFIX)}[^\n]*")


def fingerprint(path: str, title: str, body: str) -> str:
    def norm(text: str) -> str:
        return " ".join(re.sub(r"[^a-z ]+", " ", text.lower()).split())

    body = _WHY.sub("", body)

    return hashlib.sha256(f"{path}\0{norm(title)}\0{norm(body)}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ModelReview:
    """What the model said, before validation."""

    summary: str
    comments: list[dict[str, object]]
    #: a JSON object with a string ``summary`` or a list of ``comments``: the model
    #: followed the review format (an answer without them is not a review)
    usable: bool = True
    walkthrough: list[dict[str, object]] = field(default_factory=list)  # per changed file
    #: the model's verdict on each tool finding ({"id", "verdict", "why"})
    tool_verdicts: list[dict[str, object]] = field(default_factory=list)


def json_object(content: str) -> dict[str, object] | None:
    """The JSON object in a model's answer, tolerating prose around it, code fences and
    trailing commas; None when there is none."""
    start, end = content.find("{"), content.rfind("}")
    if 0 <= start < end:
        raw = content[start : end + 1]
        for attempt in (raw, re.sub(r",\s*([}\]])", r"\1", raw)):
            try:
                data = json.loads(attempt)
            except json.JSONDecodeError:
                continue
            return data if isinstance(data, dict) else None
    return None


def parse_model_review(content: str) -> ModelReview:
    """The model's JSON answer, tolerating prose around it, code fences and trailing commas."""
    data = json_object(content)
    if data is None:
        text = content.strip()
        summary_text = text[:2000] if text else "The model returned no usable review."
        return ModelReview(summary_text, [], usable=False)
    summary = data.get("summary")
    comments = data.get("comments")
    rows = data.get("walkthrough")
    verdicts = data.get("tool_findings")
    return ModelReview(
        summary if isinstance(summary, str) else "",
        [c for c in comments if isinstance(c, dict)] if isinstance(comments, list) else [],
        usable=isinstance(summary, str) or isinstance(comments, list),
        walkthrough=[r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else [],
        tool_verdicts=[v for v in verdicts if isinstance(v, dict)]
        if isinstance(verdicts, list)
        else [],
    )


@dataclass(frozen=True)
class ValidatedComments:
    comments: list[ReviewComment]
    moved_to_summary: list[str]  # "path:line title: body" of comments GitHub would refuse
    dropped: int  # praise, empty or repeated


def validate_comments(
    raw: Iterable[dict[str, object]],
    diffs: Sequence[FileDiff],
    max_comments: int,
    already_posted: Iterable[str] = (),
    rejected: Callable[[ReviewComment], bool] = lambda _: False,
) -> ValidatedComments:
    """Keep comments that land on diff lines (snapping a few lines), best first, capped.
    Dropped: praise, repeats of ``already_posted`` fingerprints, and what ``rejected``
    says the repository turned down before."""
    files = {d.path: d for d in diffs if d.hunks}
    seen = set(already_posted)
    kept: list[ReviewComment] = []
    moved: list[str] = []
    dropped = 0
    for item in raw:
        comment = _coerce(item)
        if (
            comment is None
            or _is_praise(comment)
            or comment.fingerprint in seen
            or rejected(comment)
        ):
            dropped += 1
            continue
        seen.add(comment.fingerprint)
        diff = files.get(comment.path)
        line = snap_line(diff, comment.line)
        if line is None or diff is None:
            moved.append(f"{comment.path}:{comment.line} {comment.title}: {comment.body}")
            continue
        kept.append(fit_range(comment, diff, line))
    kept.sort(key=lambda c: (SEVERITIES.index(c.severity), c.path, c.line))
    for extra in kept[max_comments:]:
        moved.append(f"{extra.path}:{extra.line} {extra.title}: {extra.body}")
    return ValidatedComments(kept[:max_comments], moved, dropped)


def fit_range(comment: ReviewComment, diff: FileDiff, line: int) -> ReviewComment:
    """``comment`` on ``line``, its range kept when ``start_line..line`` lies within the
    hunk that holds ``line`` (GitHub refuses one that leaves it). A range that does not
    fit is cut to the hunk; a suggestion written for it would then replace the wrong
    lines, so it stays in the body as plain code instead of a suggestion."""
    start = comment.start_line if comment.start_line != comment.line else None
    start = start + (line - comment.line) if start is not None else None  # moved with line
    first = next((min(h.new_lines) for h in diff.hunks if line in h.new_lines), line)
    fitted = comment.__class__(
        comment.path,
        line,
        "RIGHT",
        comment.severity,
        comment.title,
        comment.body,
        comment.suggestion,
        start if start is not None and first <= start < line else None,
    )
    if start is None or fitted.start_line is not None:
        return fitted
    if comment.suggestion is None:
        return replace(fitted, start_line=first if first < line else None)
    return replace(fitted, suggestion=None, code=comment.suggestion)


def snap_line(diff: FileDiff | None, line: int) -> int | None:
    """``line`` if a comment may sit there, else the nearest such line of the same hunk
    within ``SNAP_DISTANCE`` lines, else None."""
    if diff is None:
        return None
    if line in diff.commentable_lines:
        return line
    best: tuple[int, int] | None = None
    for hunk in diff.hunks:
        if (
            not hunk.new_start - SNAP_DISTANCE
            <= line
            <= hunk.new_start + hunk.new_len + SNAP_DISTANCE
        ):
            continue
        for candidate in hunk.new_lines:
            distance = abs(candidate - line)
            if distance <= SNAP_DISTANCE and (best is None or (distance, candidate) < best):
                best = (distance, candidate)
    return best[1] if best else None


def _coerce(item: dict[str, object]) -> ReviewComment | None:
    path, title, body = item.get("path"), item.get("title"), item.get("body")
    line = item.get("line")
    if isinstance(line, str) and line.strip().isdigit():
        line = int(line)
    if not isinstance(path, str) or not isinstance(line, int) or isinstance(line, bool):
        return None
    title = title.strip() if isinstance(title, str) else ""
    body = body.strip() if isinstance(body, str) else ""
    if not title and not body:
        return None
    severity = str(item.get("severity", "minor")).lower()
    suggestion = item.get("suggestion")
    start = item.get("start_line")
    if isinstance(start, str) and start.strip().isdigit():
        start = int(start)
    usable_start = isinstance(start, int) and not isinstance(start, bool) and 0 < start < line
    return ReviewComment(
        path.removeprefix("b/").strip(),
        line,
        "RIGHT",
        Severity(severity) if severity in SEVERITIES else Severity.MINOR,
        title or body.split(".")[0][:80],
        body or title,
        suggestion if isinstance(suggestion, str) and suggestion.strip() else None,
        start if usable_start else None,  # type: ignore[arg-type]
    )


def _is_praise(comment: ReviewComment) -> bool:
    return comment.suggestion is None and bool(_PRAISE.match(comment.title or comment.body))

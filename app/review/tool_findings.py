"""The tools' findings in a review: shown to the model as evidence with an id each, then
fused with its answer. The model confirms a finding (and says why it matters here) or
dismisses it (and says why); a confirmed or unanswered one is posted as an inline
comment naming the tool and its rule, with a link to the rule and the tool's fix as a
suggestion; a comment of the model's own on the same lines gives way to it. Pure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.review.comments import WHY_PREFIX
from app.review.markdown import inert
from app.tools.findings import ToolFinding
from app.tools.stage import ToolReport
from app.wording import counted

VERDICTS = ("confirm", "dismiss")


def finding_id(index: int) -> str:
    return f"T{index + 1}"


def render_tool_findings(numbered: Iterable[tuple[int, ToolFinding]]) -> str:
    """The prompt's list of tool findings (each with its index among the review's), one a
    line with its id; '' when none."""
    return "\n".join(
        f"{finding_id(i)} {f.path}:{_lines(f)} [{f.tool} {f.rule}, {f.severity}] {f.message}"
        for i, f in numbered
    )


def _lines(finding: ToolFinding) -> str:
    last = max(finding.end_line, finding.line)
    return f"{finding.line}" if last == finding.line else f"{finding.line}-{last}"


@dataclass(frozen=True)
class Fused:
    """The review's comments after fusion: the tools' (as the model's comments are
    written, to be validated with them), the model's own that remain, and the findings
    the model dismissed ("tool rule at path:line: why")."""

    tool_comments: list[dict[str, object]]
    model_comments: list[dict[str, object]]
    dismissed: list[str]


def fuse(
    findings: Sequence[ToolFinding],
    verdicts: Iterable[dict[str, object]],
    model_comments: Iterable[dict[str, object]],
) -> Fused:
    said = {
        str(v.get("id")): (str(v.get("verdict")), str(v.get("why") or "").strip())
        for v in verdicts
        if isinstance(v, dict)
    }
    posted, dismissed = [], []
    for i, finding in enumerate(findings):
        verdict, why = said.get(finding_id(i), ("confirm", ""))
        if verdict == "dismiss":
            reason = f": {why}" if why else ""
            dismissed.append(
                f"{finding.tool} {finding.rule} at {finding.path}:{finding.line}{reason}"
            )
        else:
            posted.append((finding, why))
    kept = [c for c in model_comments if not any(_same_place(c, f) for f, _ in posted)]
    return Fused([tool_comment(f, why) for f, why in posted], kept, dismissed)


def _same_place(comment: dict[str, object], finding: ToolFinding) -> bool:
    line = comment.get("line")
    return (
        comment.get("path") == finding.path
        and isinstance(line, int)
        and finding.line <= line <= max(finding.end_line, finding.line)
    )


def tool_comment(finding: ToolFinding, why: str = "") -> dict[str, object]:
    """A finding as the model's comments are written (``validate_comments`` takes both).
    Its title names the tool and the rule in words the same for every finding of the
    rule, so a 👎 turns the rule down in the repository (``app/review/feedback.py``)."""
    rule = (
        f"[`{finding.tool}` {finding.rule}]({finding.url})"
        if finding.url
        else (f"`{finding.tool}` {finding.rule}")
    )
    body = finding.message
    if why:
        body += f"\n\n{WHY_PREFIX} {' '.join(why.split())}"
    body += f"\n\nFound by {rule}."
    last = max(finding.end_line, finding.line)
    return {
        "path": finding.path,
        "line": last,
        "start_line": finding.line if last > finding.line else None,
        "side": "RIGHT",
        "severity": finding.severity,
        "title": f"{finding.tool} {finding.rule}: {finding.title}",
        "body": body,
        "suggestion": finding.fix,
    }


def tools_markdown(report: ToolReport, dismissed: Sequence[str]) -> str:
    """The review body's account of the tools: what failed to run (in view), then what
    each checked and found, the files no tool read, and the findings the model
    dismissed (folded)."""
    if not report.runs and not report.skipped:
        return ""
    parts = []
    if report.problems:
        parts.append(
            "**Tools that did not finish** (the review went on without them)\n"
            + "\n".join(f"- {p}" for p in report.problems)
        )
    on_lines = Counter(f.tool for f in report.findings)
    rows = [
        f"- `{r.tool}`: {counted(r.files, 'file')}, {counted(on_lines[r.tool], 'finding')}"
        f" on the changed lines{f' (configuration: {r.config})' if r.config else ''}"
        for r in report.runs
        if not r.problem
    ]
    rows += [f"- not checked: {s}" for s in report.skipped]
    # the model wrote the reasons: inert, as the rest of what it writes in the review
    rows += [f"- dismissed by the review: {inert(d)}" for d in dismissed]
    if rows:
        parts.append(
            "<details><summary>Checked by tools</summary>\n\n" + "\n".join(rows) + "\n</details>"
        )
    return "\n\n".join(parts)

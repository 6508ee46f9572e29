"""The merge gate: the check run fails when the PR has an open finding at or above the
repository's ``gate`` severity, and passes otherwise. Open means: posted by the bot on
this PR (now or on an earlier push), its thread not resolved, and not rejected with a
👎 (and no 👍). A review that failed is never a failure of the gate: the check is then
``neutral`` with the reason. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.review.config import SEVERITY_ORDER
from app.wording import counted


@dataclass(frozen=True)
class Finding:
    """One of the bot's findings on the PR, as the gate weighs it."""

    path: str
    line: int | None
    severity: str
    title: str
    resolved: bool = False
    rejected: bool = False


def blocking(gate: str, findings: Iterable[Finding]) -> list[Finding]:
    """The open findings at or above ``gate`` (none when the gate is off)."""
    if gate not in SEVERITY_ORDER:
        return []
    bar = SEVERITY_ORDER.index(gate)
    return [
        f
        for f in findings
        if not f.resolved
        and not f.rejected
        and f.severity in SEVERITY_ORDER
        and SEVERITY_ORDER.index(f.severity) >= bar
    ]


def gate_outcome(gate: str, findings: Sequence[Finding]) -> tuple[str, str, str]:
    """(conclusion, title, summary) of the check run for a review that was written."""
    if gate not in SEVERITY_ORDER:
        return "neutral", "reviewbot", "The merge gate is off (`gate` in `.reviewbot.toml`)."
    found = blocking(gate, findings)
    if not found:
        return (
            "success",
            f"No open finding at {gate} or above",
            f"The gate fails on open findings at or above **{gate}**; there are none.",
        )
    listed = "\n".join(f"- **{f.severity}** `{f.path}:{f.line}` {f.title}" for f in found)
    return (
        "failure",
        f"{counted(len(found), 'open finding')} at {gate} or above",
        f"The gate fails on open findings at or above **{gate}**. Resolve the thread once"
        f" fixed, or react 👎 to a finding that is wrong:\n\n{listed}",
    )

"""Threads that resolve themselves: on a push, a thread the bot started whose lines the
push changed or deleted is resolved, with a reply naming the commit, when the model
says the finding no longer applies (without a model: when the code it was about is
gone). A thread a person replied to after the bot is left to people, unless that person
wrote ``/resolve``. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from importlib import resources
from string import Template

from app.forge.models import ReviewComment
from app.llm.redact import redact_secrets
from app.review.comments import json_object
from app.review.markdown import inert
from app.review.prompt import ReviewPrompt, data_fence

SYSTEM = resources.files("app.review").joinpath("prompts/resolve_system.txt").read_text("utf-8")
USER = Template(
    resources.files("app.review").joinpath("prompts/resolve_user.txt").read_text("utf-8")
)
RESOLVED = "<!-- reviewbot:resolved -->"
#: On the reply that says a fixed finding's thread could not be resolved (said once).
NOT_RESOLVED = "<!-- reviewbot:not-resolved -->"
RESOLVE_COMMAND = "/resolve"
#: Lines shown around the place the commented code was, in the new version.
AROUND = 12


def people_allow(replies: Iterable[ReviewComment]) -> bool:
    """No person replied in the thread, or one who did wrote ``/resolve``."""
    people = [r for r in replies if not r.author.bot]
    return not people or any(r.body.strip() == RESOLVE_COMMAND for r in people)


def already_answered(replies: Iterable[ReviewComment]) -> bool:
    """The bot already said the thread is fixed (a retry only resolves it)."""
    return said_before(replies, RESOLVED)


def commented_lines(text: str, start: int, end: int) -> list[str]:
    """Lines ``start``-``end`` (1-based) of ``text``."""
    return text.splitlines()[max(0, start - 1) : end]


def still_there(lines: Sequence[str], new_text: str) -> bool:
    """Whether ``lines`` (ignoring indentation and blank lines) still stand together in
    ``new_text``: if not, the push changed or deleted them."""
    wanted = [line.strip() for line in lines if line.strip()]
    if not wanted:
        return True
    have = [line.strip() for line in new_text.splitlines() if line.strip()]
    width = len(wanted)
    return any(have[i : i + width] == wanted for i in range(len(have) - width + 1))


def excerpt(new_text: str, near: int) -> str:
    """The new version's lines around line ``near``."""
    lines = new_text.splitlines()
    low, high = max(0, near - AROUND), min(len(lines), near + AROUND)
    return "\n".join(f"{n:>5} {line}" for n, line in enumerate(lines[low:high], low + 1))


def resolve_prompt(comment: str, old: str, new: str) -> ReviewPrompt:
    comment, old, new = redact_secrets(comment), redact_secrets(old), redact_secrets(new)
    fence = data_fence(comment, old, new)
    return ReviewPrompt(
        SYSTEM, USER.substitute(fence=fence, comment=comment, old=old, new=new or "(deleted)")
    )


def parse_verdict(content: str) -> tuple[bool, str] | None:
    """(still applies, why), or None when the answer is not a verdict."""
    data = json_object(content)
    if data is None or not isinstance(data.get("still_applies"), bool):
        return None
    return bool(data["still_applies"]), str(data.get("why") or "").strip()


def resolved_reply(commit: str, why: str) -> str:
    """Posted once the thread is resolved, never before: it says what happened."""
    said = f" {inert(why)}" if why else ""
    return f"Fixed in {commit[:12]}.{said} Resolved this thread.\n\n{RESOLVED}"


def not_resolved_reply(commit: str, why: str) -> str:
    """Posted when the finding is fixed but the code host refused to resolve the thread."""
    said = f" {inert(why)}" if why else ""
    return (
        f"Fixed in {commit[:12]}.{said} This thread could not be resolved automatically;"
        f" resolve it by hand.\n\n{NOT_RESOLVED}"
    )


def said_before(replies: Iterable[ReviewComment], marker: str) -> bool:
    """The bot already posted a reply carrying ``marker`` in this thread."""
    return any(r.author.bot and marker in r.body for r in replies)

"""A pull request's description, written by the bot (``/describe``, or ``describe`` in
``.reviewbot.toml``): a title suggestion, a type, a summary and the walkthrough, and the
labels to apply, chosen from the repository's own. Pure.

The bot's text lives between two markers. ``append`` keeps the author's text and adds
the section after it; a later run replaces the section in place. ``replace`` puts the
section first and keeps the author's text under it, collapsed: the author's words are
never lost.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from string import Template

from app.llm.redact import redact_secrets
from app.review.comments import json_object
from app.review.markdown import inert
from app.review.prompt import ReviewPrompt, data_fence
from app.review.walkthrough import FileChange, walkthrough_markdown

SYSTEM = resources.files("app.review").joinpath("prompts/describe_system.txt").read_text("utf-8")
USER = Template(
    resources.files("app.review").joinpath("prompts/describe_user.txt").read_text("utf-8")
)
START = "<!-- reviewbot:describe:start -->"
END = "<!-- reviewbot:describe:end -->"
ORIGINAL_START = "<!-- reviewbot:original:start -->"
ORIGINAL_END = "<!-- reviewbot:original:end -->"
TYPES = (
    "bug fix",
    "feature",
    "refactor",
    "performance",
    "documentation",
    "tests",
    "build",
    "dependencies",
    "chore",
)
_SECTION = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
_ORIGINAL = re.compile(re.escape(ORIGINAL_START) + r"\n?(.*?)\n?" + re.escape(ORIGINAL_END), re.S)
_KEPT = "<details><summary>The author's description</summary>"
_KEPT_BLOCK = re.compile(
    re.escape(_KEPT) + r".*?" + re.escape(ORIGINAL_END) + r"\s*</details>", re.S
)
MAX_BODY_CHARS = 65_000  # GitHub's limit on a PR description is 65,536


@dataclass(frozen=True)
class Description:
    title: str
    type: str
    summary: str
    walkthrough: list[dict[str, object]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)


def describe_prompt(
    title: str,
    body: str,
    diff_text: str,
    omitted: Sequence[str],
    labels: Sequence[str],
    language: str | None = None,
) -> ReviewPrompt:
    """The request for a description: the PR's own text, the diff and the label names,
    each fenced as data."""
    title, body = redact_secrets(title.strip()), redact_secrets(author_text(body) or "(none)")
    diff_text = redact_secrets(diff_text)
    label_text = "\n".join(labels) or "(the repository has no labels)"
    fence = data_fence(title, body, diff_text, label_text)
    left_out = "".join(f"\n- {o}" for o in omitted)
    return ReviewPrompt(
        SYSTEM,
        USER.substitute(
            fence=fence,
            title=title,
            body=body,
            diff=diff_text,
            omitted=f"\nLeft out of the diff to fit the budget:{left_out}\n" if omitted else "",
            labels=label_text,
            language=f"\nWrite the title, summary and walkthrough in {language}.\n"
            if language
            else "",
        ),
    )


def parse_description(content: str, labels: Sequence[str]) -> Description | None:
    """The model's answer; labels kept only when the repository has them (by name, case
    as the repository spells it). None when the answer is not a description."""
    data = json_object(content)
    if data is None or not isinstance(data.get("summary"), str):
        return None
    known = {name.lower(): name for name in labels}
    wanted = data.get("labels")
    chosen = [
        known[str(name).lower()]
        for name in (wanted if isinstance(wanted, list) else [])
        if str(name).lower() in known
    ]
    kind = str(data.get("type") or "").strip().lower()
    rows = data.get("walkthrough")
    return Description(
        title=" ".join(str(data.get("title") or "").split())[:120],
        type=kind if kind in TYPES else "",
        summary=str(data["summary"]).strip(),
        walkthrough=[r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else [],
        labels=list(dict.fromkeys(chosen)),
    )


def section(description: Description, rows: Sequence[FileChange]) -> str:
    """The bot's part of the PR description, between its markers."""
    lines = [START, "### What this pull request does (reviewbot)", ""]
    if description.title:
        lines.append(f"**Suggested title:** {inert(description.title)}")
    if description.type:
        lines.append(f"**Type:** {description.type}")
    if description.summary:
        lines += ["", inert(description.summary)]
    table = walkthrough_markdown(rows)
    if table:
        lines += ["", "<details><summary>Walkthrough</summary>", "", table, "", "</details>"]
    lines += ["", END]
    return "\n".join(lines)


def author_text(body: str) -> str:
    """What the author wrote: the body without the bot's section; after a ``replace``,
    the text kept under it and anything the author added since."""
    kept = _ORIGINAL.search(body)
    outside = re.sub(r"\n{3,}", "\n\n", _KEPT_BLOCK.sub("", _SECTION.sub("", body))).strip()
    if kept is None:
        return outside
    return "\n\n".join(part for part in (kept.group(1).strip(), outside) if part)


def merged_body(body: str, bot_section: str, mode: str) -> str:
    """The new PR description for ``mode`` (``append`` or ``replace``)."""
    author = author_text(body)
    if mode == "replace":
        merged = bot_section
        if author:
            merged += f"\n\n{_KEPT}\n\n{ORIGINAL_START}\n{author}\n{ORIGINAL_END}\n\n</details>"
    else:
        merged = f"{author}\n\n{bot_section}" if author else bot_section
    return merged[:MAX_BODY_CHARS]

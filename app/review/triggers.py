"""Which pull requests are reviewed on their own: trigger filters on the author, the
labels, the branches and the title (``.reviewbot.toml`` ``[review]``, server defaults in
settings). Bots are left out by default: Dependabot's and Renovate's PRs are many and
cost money. ``/review`` by someone with write access reviews whatever the filters say.
Pure."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from app.config import Settings
from app.review.config import ReviewConfig


@dataclass(frozen=True)
class PullFacts:
    """What the filters look at."""

    author: str
    labels: tuple[str, ...]
    base_ref: str
    head_ref: str
    title: str


def skip_reason(facts: PullFacts, config: ReviewConfig, settings: Settings) -> str | None:
    """Why the PR is not reviewed on its own, or None when it is."""
    authors = (
        config.ignore_authors
        if config.ignore_authors is not None
        else settings.review_ignore_authors
    )
    if _any_glob(authors, facts.author):
        return f"author {facts.author} is in ignore_authors"
    wanted = {label.lower() for label in config.ignore_labels}
    for label in facts.labels:
        if label.lower() in wanted:
            return f"label {label!r} is in ignore_labels"
    for which, ref in (("base", facts.base_ref), ("head", facts.head_ref)):
        if _any_glob(config.ignore_branches, ref):
            return f"{which} branch {ref} matches ignore_branches"
    if config.ignore_title and re.search(config.ignore_title, facts.title):
        return "the title matches ignore_title"
    return None


def _any_glob(patterns: Iterable[str], value: str) -> bool:
    return any(_glob(p).fullmatch(value) for p in patterns)


@functools.lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    """``*`` matches anything (``/`` too); everything else, brackets included, is itself:
    ``*[bot]`` matches ``dependabot[bot]``. Case-insensitive, as GitHub logins are."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.I)

"""The ``[review]`` table of ``.reviewbot.toml``: how a repository shapes its reviews.

Read from the default branch (the App) or the base revision (the CLI), never from the
PR's head: a PR must not rewrite the rules of its own review. Instructions reach the
prompt as repository policy, fenced and labelled, below the bot's own rules::

    [review]
    instructions = "We use structlog; flag print() in library code."
    exclude = ["gen/**", "**/*.pb.go"]   # never reviewed
    auto_review = true                   # false: only `/review` reviews
    drafts = false                       # default: REVIEWBOT_REVIEW_DRAFTS
    max_comments = 5                     # default: REVIEWBOT_MAX_REVIEW_COMMENTS
    min_severity = "minor"               # nit < minor < major < critical
    language = "German"                  # the language comments are written in
    describe = "append"                  # off | append | replace: the PR description
    labels = true                        # apply labels the repository already has
    gate = "major"                       # off, or the severity that fails the check run
    max_review_calls = 4                 # a large PR is reviewed in at most this many calls
    budget_tokens_per_pr = 200000        # model tokens one PR may use
    ignore_authors = ["*[bot]"]          # default: bots, Dependabot and Renovate
    ignore_labels = ["wip"]
    ignore_branches = ["release/*"]      # globs on the base and the head branch
    ignore_title = "^(WIP|Draft)\\b"     # a regular expression

    [[review.path_instructions]]
    path = "migrations/**"
    instructions = "Every migration must be reversible."
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pathspec

from app.errors import ConfigError
from app.indexing.source_tree import config_table, parse_repo_config
from app.tools.policy import ToolsPolicy, parse_tools_config
from app.wording import counted

#: Lowest first.
SEVERITY_ORDER = ("nit", "minor", "major", "critical")
MAX_COMMENTS = 50
#: Longest instructions (each), so a policy cannot crowd the diff out of the prompt.
MAX_INSTRUCTION_CHARS = 4000
MAX_PATH_INSTRUCTIONS = 50
KEYS = frozenset(
    {
        "instructions",
        "path_instructions",
        "exclude",
        "auto_review",
        "drafts",
        "max_comments",
        "min_severity",
        "language",
        "describe",
        "labels",
        "gate",
        "max_review_calls",
        "budget_tokens_per_pr",
        "ignore_authors",
        "ignore_labels",
        "ignore_branches",
        "ignore_title",
    }
)
DESCRIBE_MODES = ("off", "append", "replace")
GATES = ("off", *SEVERITY_ORDER)
MAX_REVIEW_CALLS = 20
#: The tables a ``.reviewbot.toml`` may have.
TABLES = frozenset({"index", "review", "tools"})


@dataclass(frozen=True)
class PathInstructions:
    path: str
    instructions: str
    _spec: pathspec.PathSpec = field(compare=False, repr=False)

    def matches(self, paths: Iterable[str]) -> bool:
        return any(self._spec.match_file(p) for p in paths)


@dataclass(frozen=True)
class ReviewConfig:
    instructions: str = ""
    path_instructions: tuple[PathInstructions, ...] = ()
    exclude: tuple[str, ...] = ()
    auto_review: bool = True
    drafts: bool | None = None  # None: the server's REVIEWBOT_REVIEW_DRAFTS
    max_comments: int | None = None  # None: the server's REVIEWBOT_MAX_REVIEW_COMMENTS
    min_severity: str = SEVERITY_ORDER[0]
    language: str | None = None
    # None: the server's settings (REVIEWBOT_DESCRIBE, _LABELS, _GATE, ...)
    describe: str | None = None
    labels: bool | None = None
    gate: str | None = None
    max_review_calls: int | None = None
    budget_tokens_per_pr: int | None = None
    ignore_authors: tuple[str, ...] | None = None
    ignore_labels: tuple[str, ...] = ()
    ignore_branches: tuple[str, ...] = ()
    ignore_title: str | None = None
    tools: ToolsPolicy = field(default_factory=ToolsPolicy)  # the [tools] table
    _exclude_spec: pathspec.PathSpec | None = field(default=None, compare=False, repr=False)

    def excluded(self, path: str) -> bool:
        return self._exclude_spec is not None and self._exclude_spec.match_file(path)

    def keeps(self, severity: str) -> bool:
        """True for a comment at or above ``min_severity`` (unknown severities are kept)."""
        if severity not in SEVERITY_ORDER:
            return True
        return SEVERITY_ORDER.index(severity) >= SEVERITY_ORDER.index(self.min_severity)

    def policy(self, paths: Sequence[str]) -> str:
        """The repository's instructions that apply to a diff of ``paths``, or ''."""
        parts = [self.instructions.strip()] if self.instructions.strip() else []
        parts += [
            f"For files matching {p.path}: {p.instructions.strip()}"
            for p in self.path_instructions
            if p.matches(paths)
        ]
        if self.language:
            parts.append(f"Write the summary and every comment in {self.language}.")
        return "\n\n".join(parts)


def parse_review_config(text: str, source: str) -> ReviewConfig:
    """The ``[review]`` table of a ``.reviewbot.toml``; ``ConfigError`` names the key and
    the problem."""
    table = config_table(text, source, "review", KEYS)
    exclude = _strings(table, "exclude", source)
    max_comments = table.get("max_comments")
    if max_comments is not None and (
        isinstance(max_comments, bool)
        or not isinstance(max_comments, int)
        or not 0 <= max_comments <= MAX_COMMENTS
    ):
        raise ConfigError(f"{source}: review.max_comments must be an integer from 0 to 50")
    severity = table.get("min_severity", SEVERITY_ORDER[0])
    if severity not in SEVERITY_ORDER:
        raise ConfigError(
            f"{source}: review.min_severity must be one of {', '.join(SEVERITY_ORDER)}"
        )
    language = table.get("language")
    if language is not None and (
        not isinstance(language, str) or not language.strip() or len(language) > 40
    ):
        raise ConfigError(f"{source}: review.language must be a language name")
    ignore_title = table.get("ignore_title")
    if ignore_title is not None:
        if not isinstance(ignore_title, str) or len(ignore_title) > 500:
            raise ConfigError(f"{source}: review.ignore_title must be a regular expression")
        try:
            re.compile(ignore_title)
        except re.error as exc:
            raise ConfigError(
                f"{source}: review.ignore_title is not a regular expression ({exc})"
            ) from None
    authors = table.get("ignore_authors")
    return ReviewConfig(
        instructions=_instructions(table.get("instructions", ""), "review.instructions", source),
        path_instructions=_path_instructions(table.get("path_instructions", []), source),
        exclude=exclude,
        auto_review=_flag(table, "auto_review", True, source) is not False,
        drafts=_flag(table, "drafts", None, source),
        max_comments=max_comments,
        min_severity=severity,
        language=language.strip() if language else None,
        describe=_choice(table, "describe", DESCRIBE_MODES, source),
        labels=_flag(table, "labels", None, source),
        gate=_choice(table, "gate", GATES, source),
        max_review_calls=_count(table, "max_review_calls", 1, MAX_REVIEW_CALLS, source),
        budget_tokens_per_pr=_count(table, "budget_tokens_per_pr", 0, 10**10, source),
        ignore_authors=_strings(table, "ignore_authors", source) if authors is not None else None,
        ignore_labels=_strings(table, "ignore_labels", source),
        ignore_branches=_strings(table, "ignore_branches", source),
        ignore_title=ignore_title,
        tools=parse_tools_config(text, source),
        _exclude_spec=pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None,
    )


def check_config(text: str, source: str) -> list[str]:
    """Every table of a ``.reviewbot.toml`` checked; what is set, for the CLI to show."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML ({exc})") from None
    unknown = sorted(set(data) - TABLES)
    if unknown:
        raise ConfigError(
            f"{source}: unknown tables {', '.join(unknown)} (known: {', '.join(sorted(TABLES))})"
        )
    index = parse_repo_config(text, source)
    review = parse_review_config(text, source)
    return [
        f"[index] include {list(index.include) or 'everything'}, exclude {list(index.exclude)}",
        f"[review] auto_review {review.auto_review}, min_severity {review.min_severity},"
        f" max_comments {review.max_comments if review.max_comments is not None else 'default'},"
        f" {counted(len(review.path_instructions), 'path instruction')},"
        f" exclude {list(review.exclude)}",
        f"[review] describe {review.describe or 'default'}, labels"
        f" {review.labels if review.labels is not None else 'default'},"
        f" gate {review.gate or 'default'}, max_review_calls"
        f" {review.max_review_calls or 'default'}, budget_tokens_per_pr"
        f" {review.budget_tokens_per_pr if review.budget_tokens_per_pr is not None else 'default'}",
        f"[review] ignore_authors"
        f" {list(review.ignore_authors) if review.ignore_authors is not None else 'default'},"
        f" ignore_labels {list(review.ignore_labels)}, ignore_branches"
        f" {list(review.ignore_branches)}, ignore_title {review.ignore_title!r}",
        f"[tools] enabled {review.tools.enabled}, disable {list(review.tools.disable)},"
        f" skip {list(review.tools.skip)}, diff_context {review.tools.diff_context},"
        f" min_severity {review.tools.min_severity}",
    ]


def _strings(table: dict[str, object], key: str, source: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: review.{key} must be a list of strings")
    return tuple(value)


def _choice(table: dict[str, object], key: str, choices: Sequence[str], source: str) -> str | None:
    value = table.get(key)
    if value is not None and value not in choices:
        raise ConfigError(f"{source}: review.{key} must be one of {', '.join(choices)}")
    return value  # type: ignore[return-value]


def _count(table: dict[str, object], key: str, low: int, high: int, source: str) -> int | None:
    value = table.get(key)
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high
    ):
        raise ConfigError(f"{source}: review.{key} must be an integer from {low} to {high}")
    return value


def _flag(table: dict[str, object], key: str, default: bool | None, source: str) -> bool | None:
    value = table.get(key, default)
    if value is not None and not isinstance(value, bool):
        raise ConfigError(f"{source}: review.{key} must be true or false")
    return value


def _instructions(value: object, key: str, source: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{source}: {key} must be a string")
    if len(value) > MAX_INSTRUCTION_CHARS:
        raise ConfigError(f"{source}: {key} is longer than {MAX_INSTRUCTION_CHARS} characters")
    return value


def _path_instructions(value: object, source: str) -> tuple[PathInstructions, ...]:
    if not isinstance(value, list) or len(value) > MAX_PATH_INSTRUCTIONS:
        raise ConfigError(
            f"{source}: review.path_instructions must be a list of at most"
            f" {MAX_PATH_INSTRUCTIONS} tables ([[review.path_instructions]])"
        )
    found = []
    for i, item in enumerate(value):
        key = f"review.path_instructions[{i}]"
        if not isinstance(item, dict) or set(item) != {"path", "instructions"}:
            raise ConfigError(f"{source}: {key} must have exactly the keys path and instructions")
        path = item["path"]
        if not isinstance(path, str) or not path.strip():
            raise ConfigError(f"{source}: {key}.path must be a glob")
        text = _instructions(item["instructions"], f"{key}.instructions", source)
        spec = pathspec.GitIgnoreSpec.from_lines([path])
        found.append(PathInstructions(path, text, spec))
    return tuple(found)

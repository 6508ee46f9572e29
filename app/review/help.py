"""``/help``: the commands the bot understands and the repository's effective review
settings (its ``[review]`` table over the server's defaults). Pure."""

from __future__ import annotations

from app.config import Settings
from app.review.budget import per_pr_limit
from app.review.config import ReviewConfig

COMMANDS = (
    ("/review", "write", "review the whole PR again, whatever the trigger filters say"),
    ("/describe", "write", "write the PR description (title, type, summary, walkthrough)"),
    ("/reindex", "write", "re-index the repository from its default branch"),
    ("/ask <question>", "read", "answer a question about this PR and the repository"),
    ("/help", "read", "this list"),
    ("a reply to the bot's comment", "read", "an answer in that thread"),
    ("/resolve (in the bot's thread)", "read", "lets the bot resolve the thread once fixed"),
)


def effective_settings(config: ReviewConfig, settings: Settings) -> list[tuple[str, str]]:
    """(key, value) of every review setting as this repository's reviews use it."""
    drafts = settings.review_drafts if config.drafts is None else config.drafts
    comments = settings.max_review_comments if config.max_comments is None else config.max_comments
    authors = (
        config.ignore_authors
        if config.ignore_authors is not None
        else settings.review_ignore_authors
    )
    per_pr = per_pr_limit(config.budget_tokens_per_pr, settings.budget_tokens_per_pr).tokens
    return [
        ("auto_review", _bool(config.auto_review)),
        ("drafts", _bool(drafts)),
        ("max_comments", str(comments)),
        ("min_severity", config.min_severity),
        ("language", config.language or "(the model's choice)"),
        ("describe", config.describe or settings.review_describe),
        ("labels", _bool(settings.review_labels if config.labels is None else config.labels)),
        ("gate", config.gate or settings.review_gate),
        ("max_review_calls", str(config.max_review_calls or settings.max_review_calls)),
        ("budget_tokens_per_pr", "none" if per_pr is None else f"{per_pr:,}"),
        ("ignore_authors", ", ".join(authors) or "(none)"),
        ("ignore_labels", ", ".join(config.ignore_labels) or "(none)"),
        ("ignore_branches", ", ".join(config.ignore_branches) or "(none)"),
        ("ignore_title", config.ignore_title or "(none)"),
        ("exclude", ", ".join(config.exclude) or "(none)"),
        (
            "instructions",
            f"{len(config.instructions)} characters" if config.instructions else "(none)",
        ),
        ("path_instructions", str(len(config.path_instructions))),
    ]


def help_markdown(config: ReviewConfig, settings: Settings) -> str:
    rows = "\n".join(f"| `{name}` | {who} | {what} |" for name, who, what in COMMANDS)
    table = "\n".join(
        f"| `{key}` | `{value}` |" for key, value in effective_settings(config, settings)
    )
    return (
        "**reviewbot commands** (as a PR comment)\n\n"
        "| command | who | what it does |\n|---|---|---|\n"
        f"{rows}\n\n"
        "**This repository's review settings** (`.reviewbot.toml` `[review]` on the default"
        " branch, over the server's defaults)\n\n"
        f"| setting | value |\n|---|---|\n{table}\n"
    )


def _bool(value: bool) -> str:
    return "true" if value else "false"

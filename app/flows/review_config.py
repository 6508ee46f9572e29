"""The ``[review]`` settings of a repository, as its default branch has them."""

from __future__ import annotations

import hashlib
import logging

from app.errors import ConfigError
from app.forge.protocol import RepoHost
from app.indexing.source_tree import CONFIG_FILE
from app.logs import kv
from app.review.config import ReviewConfig, parse_review_config

log = logging.getLogger(__name__)


def repository_review_config(api: RepoHost, pr_number: int) -> ReviewConfig:
    """The ``[review]`` table of ``.reviewbot.toml`` on the default branch (never the PR's
    head, which must not set the rules of its own review). An invalid file is named in
    one PR comment per distinct file content, and the review goes on with the defaults."""
    branch = api.default_branch()
    data = api.content(CONFIG_FILE, branch)
    if data is None:
        return ReviewConfig()
    try:
        return parse_review_config(data.decode("utf-8", "replace"), f"{CONFIG_FILE} on {branch}")
    except ConfigError as exc:
        tag = f"<!-- reviewbot:config={hashlib.sha256(data).hexdigest()[:16]} -->"
        said = [c.body for c in api.issue_comments(pr_number)]
        if not any(tag in body for body in said):
            api.comment(
                pr_number,
                f"reviewbot could not use `.reviewbot.toml`: {exc}. This review uses the"
                f" default settings; `reviewbot config check` validates the file.\n\n{tag}",
            )
        log.warning(kv("review.config_invalid", pr=pr_number, error=exc))
        return ReviewConfig()

"""GitHub as the code host the workflows use (``app/forge/protocol.py``): repositories
through the App's installations, links to github.com (or GitHub Enterprise), and git
over HTTPS with an installation token."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cached_property
from pathlib import Path

from app.config import Settings
from app.forge.git_fetch import fetch_branch
from app.git import LocalRepo
from app.github.client import GitHubApp, RepoApi
from app.github.urls import permalinks, web_url
from app.tls import git_ca_file


class GitHubHost:
    """``CodeHost`` for GitHub. The App client is made on first use: a host that is never
    called needs no App credentials."""

    def __init__(self, settings: Settings, app: Callable[[], GitHubApp] | None = None) -> None:
        self.settings = settings
        self._make_app = app or (lambda: GitHubApp(settings))

    @cached_property
    def app(self) -> GitHubApp:
        return self._make_app()

    def repository(self, installation_id: int, repo: str) -> RepoApi:
        return RepoApi(self.app.installation(installation_id), repo)

    def permalinks(self, repo: str, commit: str) -> Callable[[str, int, int], str]:
        return permalinks(self.settings.github_api_url, repo, commit)

    def pull_url(self, repo: str, number: int) -> str:
        return f"{web_url(self.settings.github_api_url)}/{repo}/pull/{number}"

    def fetch_history(
        self,
        installation_id: int,
        repo: str,
        branch: str,
        into: Path,
        days: float,
        back_to: datetime | None,
    ) -> tuple[LocalRepo, str]:
        token = self.app.installation_token(installation_id)
        git_url = web_url(self.settings.github_api_url)
        return fetch_branch(
            git_url,
            repo,
            branch,
            token,
            into,
            days=days,
            back_to=back_to,
            ca_file=git_ca_file(self.settings),
        )

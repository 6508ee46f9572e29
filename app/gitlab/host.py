"""GitLab as the code host the workflows use (``app/forge/protocol.py``): projects through
one access token, links to the instance's web pages, and git over HTTPS with the token
(HTTP Basic, user ``oauth2``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cached_property
from pathlib import Path
from urllib.parse import quote

from app.config import Settings
from app.errors import ConfigError
from app.forge.git_fetch import fetch_branch
from app.git import LocalRepo
from app.gitlab.client import GitLabClient
from app.gitlab.project import ProjectApi
from app.gitlab.records import project_path


class GitLabHost:
    """``CodeHost`` for one GitLab instance (``GITLAB_URL``). Its repositories are keyed
    ``<instance>/<path>``; a job's installation id is the project's id. The client is made
    on first use: a deployment that serves GitHub alone never needs a GitLab token."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.url = settings.gitlab_url

    @cached_property
    def client(self) -> GitLabClient:
        return GitLabClient(self.url, self.settings.gitlab_token)

    def repository(self, installation_id: int, repo: str) -> ProjectApi:
        return ProjectApi(self.client, installation_id, project_path(self.url, repo))

    def permalinks(self, repo: str, commit: str) -> Callable[[str, int, int], str]:
        base = f"{self.url}/{project_path(self.url, repo)}/-/blob/{commit}"

        def link(path: str, start: int, end: int) -> str:
            return f"{base}/{quote(path)}#L{start}-{end}"

        return link

    def pull_url(self, repo: str, number: int) -> str:
        return f"{self.url}/{project_path(self.url, repo)}/-/merge_requests/{number}"

    def fetch_history(
        self,
        installation_id: int,
        repo: str,
        branch: str,
        into: Path,
        days: float,
        back_to: datetime | None,
    ) -> tuple[LocalRepo, str]:
        token = self.settings.gitlab_token
        if token is None:
            raise ConfigError("GITLAB_TOKEN must be set to fetch from GitLab")
        path = project_path(self.url, repo)
        return fetch_branch(
            self.url, path, branch, token, into, days=days, back_to=back_to, user="oauth2"
        )

"""GitLab as the code host the workflows use (``app/forge/protocol.py``): projects through
one access token, links to the instance's web pages, and git over HTTPS with the token
(HTTP Basic, user ``oauth2``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from pydantic import SecretStr

from app.config import Settings
from app.errors import ConfigError
from app.forge.git_fetch import fetch_branch
from app.git import LocalRepo
from app.gitlab.client import GitLabClient
from app.gitlab.project import ProjectApi
from app.gitlab.records import project_path, token_for
from app.tls import git_ca_file, ssl_context


class GitLabHost:
    """``CodeHost`` for one GitLab instance (``GITLAB_URL``). Its repositories are keyed
    ``<instance>/<path>``; a job's installation id is the project's id. Each project is
    reached with its own token (``GITLAB_TOKENS``: project and group access tokens) or
    ``GITLAB_TOKEN``; one client per token, made on first use, so a deployment that
    serves GitHub alone never needs a GitLab token."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.url = settings.gitlab_url
        self._clients: dict[str, GitLabClient] = {}
        self._lock = threading.Lock()

    def _token(self, path: str) -> SecretStr:
        settings = self.settings
        token = token_for(path, settings.gitlab_tokens, settings.gitlab_token)
        if token is None:
            raise ConfigError(f"no GitLab token for {path}: set GITLAB_TOKEN or GITLAB_TOKENS")
        return token

    def client(self, path: str) -> GitLabClient:
        token = self._token(path)
        with self._lock:
            key = token.get_secret_value()
            if key not in self._clients:
                self._clients[key] = GitLabClient(
                    self.url, token, verify=ssl_context(self.settings)
                )
            return self._clients[key]

    def repository(self, installation_id: int, repo: str) -> ProjectApi:
        path = project_path(self.url, repo)
        return ProjectApi(self.client(path), installation_id, path)

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
        path = project_path(self.url, repo)
        token = self._token(path)
        ca_file = git_ca_file(self.settings)
        return fetch_branch(
            self.url,
            path,
            branch,
            token,
            into,
            days=days,
            back_to=back_to,
            user="oauth2",
            ca_file=ca_file,
        )

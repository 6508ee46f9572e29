"""The code host of a CI run: GitHub or one GitLab instance, reached with a token from
the environment rather than the App's key, each repository read first from the local
clone the job checked out (``app/ci/local.py``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from githubkit import GitHub, TokenAuthStrategy
from pydantic import SecretStr

from app.ci.local import LocalFirst
from app.ci.target import HostKind, PullTarget
from app.config import Settings
from app.errors import ConfigError
from app.forge.git_fetch import fetch_branch
from app.forge.hosts import WrappedHost
from app.forge.protocol import CodeHost
from app.git import LocalRepo
from app.github.client import TIMEOUT, RepoApi, SharedTransport, retry_decision
from app.github.urls import permalinks, web_url
from app.gitlab.host import GitLabHost
from app.gitlab.instances import instance_settings
from app.tls import git_ca_file, ssl_context


class GitHubTokenHost:
    """``CodeHost`` for GitHub with one token (``GITHUB_TOKEN``: the Actions token or a
    personal one) instead of the App's installations."""

    def __init__(self, settings: Settings, api_url: str, token: SecretStr) -> None:
        self.settings = settings
        self.api_url = api_url
        self.token = token
        self._gh: GitHub[Any] | None = None

    def _client(self) -> GitHub[Any]:
        if self._gh is None:
            self._gh = GitHub(
                TokenAuthStrategy(self.token.get_secret_value()),
                base_url=self.api_url + "/",
                timeout=TIMEOUT,
                http_cache=False,
                auto_retry=retry_decision,
                # no idle connection kept, as the App's; a private CA trusted
                transport=SharedTransport(ssl_context(self.settings)),
            )
        return self._gh

    def repository(self, installation_id: int, repo: str) -> RepoApi:
        return RepoApi(self._client(), repo)

    def permalinks(self, repo: str, commit: str) -> Callable[[str, int, int], str]:
        return permalinks(self.api_url, repo, commit)

    def pull_url(self, repo: str, number: int) -> str:
        return f"{web_url(self.api_url)}/{repo}/pull/{number}"

    def fetch_history(
        self,
        installation_id: int,
        repo: str,
        branch: str,
        into: Path,
        days: float,
        back_to: datetime | None,
    ) -> tuple[LocalRepo, str]:
        git_url = web_url(self.api_url)
        ca_file = git_ca_file(self.settings)
        return fetch_branch(
            git_url, repo, branch, self.token, into, days=days, back_to=back_to, ca_file=ca_file
        )


def token_host(settings: Settings, target: PullTarget, local: LocalRepo | None) -> CodeHost:
    """The host ``target`` is on, with its token from ``settings``, its repositories read
    first from the clone ``local``; ``ConfigError`` naming the variable to set when
    there is no token."""
    host: CodeHost
    if target.kind is HostKind.GITHUB:
        if settings.github_token is None:
            raise ConfigError(
                "GITHUB_TOKEN is not set: give a token that can read the repository and"
                " write pull requests (in Actions: `GITHUB_TOKEN: ${{ github.token }}`)"
            )
        host = GitHubTokenHost(settings, target.host_url, settings.github_token)
    elif (view := _instance(settings, target.host_url)).gitlab_token is None and not (
        view.gitlab_tokens
    ):
        raise ConfigError(
            "GITLAB_TOKEN is not set: give a project access token with the api scope and"
            " the Developer role (CI_JOB_TOKEN cannot read or comment on merge requests)"
        )
    else:
        host = GitLabHost(view.model_copy(update={"gitlab_url": target.host_url}))
    return WrappedHost(host, lambda api: LocalFirst(api, local))


def _instance(settings: Settings, url: str) -> Settings:
    """The settings of the GitLab instance at ``url`` (``GITLAB_INSTANCES``' entry for it,
    with its tokens), else ``settings`` themselves (``GITLAB_TOKEN``)."""
    found = [v for v in instance_settings(settings) if v.gitlab_url == url.rstrip("/")]
    return found[0] if found else settings

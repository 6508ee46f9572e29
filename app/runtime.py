"""What a workflow runs with: settings, the database engine, and the code hosts (one
GitHub App client, and one GitLab client per token, per process). Jobs build it; flows
receive it."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from sqlalchemy import Engine

from app.config import Settings
from app.forge.hosts import HostRouter
from app.forge.protocol import CodeHost
from app.github.client import GitHubApp
from app.github.host import GitHubHost
from app.gitlab.host import GitLabHost
from app.gitlab.instances import instance_settings
from app.gitlab.records import instance_name


@dataclass(frozen=True)
class Runtime:
    """What tasks need: settings, the engine, and the code host."""

    settings: Settings
    engine: Engine
    #: The code host to use instead of the App's and ``GITLAB_URL``'s (the CI mode's,
    #: reached with a token from the environment).
    code_host: CodeHost | None = field(default=None, compare=False)

    @cached_property
    def github(self) -> GitHubApp:
        """The App itself: its webhook deliveries (``app/github/redelivery.py``)."""
        return GitHubApp(self.settings)

    @cached_property
    def host(self) -> CodeHost:
        """The code hosts the workflows use, as one: GitHub (sharing the App's client and
        token cache) and each GitLab instance (``GITLAB_URL``'s and ``GITLAB_INSTANCES``),
        each repository on its own."""
        if self.code_host is not None:
            return self.code_host
        views = instance_settings(self.settings)
        gitlab = {instance_name(v.gitlab_url): GitLabHost(v) for v in views}
        github = GitHubHost(self.settings, app=lambda: self.github)
        return HostRouter(github, gitlab)

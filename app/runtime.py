"""What a workflow runs with: settings, the database engine, and the code host (one
GitHub App client per process). Jobs build it; flows receive it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from sqlalchemy import Engine

from app.config import Settings
from app.forge.protocol import CodeHost
from app.github.client import GitHubApp
from app.github.host import GitHubHost


@dataclass(frozen=True)
class Runtime:
    """What tasks need: settings, the engine, and the code host."""

    settings: Settings
    engine: Engine

    @cached_property
    def github(self) -> GitHubApp:
        """The App itself: its webhook deliveries (``app/github/redelivery.py``)."""
        return GitHubApp(self.settings)

    @cached_property
    def host(self) -> CodeHost:
        """The code host the workflows use, sharing the App's client and token cache."""
        return GitHubHost(self.settings, app=lambda: self.github)

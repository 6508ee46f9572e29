"""What a workflow runs with: settings, the database engine, and one GitHub App client
per process. Jobs build it; flows receive it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from sqlalchemy import Engine

from app.config import Settings
from app.github.client import GitHubApp


@dataclass(frozen=True)
class Runtime:
    """What tasks need: settings, the engine, and one GitHub App client per process."""

    settings: Settings
    engine: Engine

    @cached_property
    def github(self) -> GitHubApp:
        return GitHubApp(self.settings)

"""Code hosts made of others: several served by one deployment (each repository's key
says which host it is on, and each call goes to that host), and one whose repositories
pass through a wrapper. The workflows see one ``CodeHost``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path

from app.forge.protocol import CodeHost, RepoHost
from app.git import LocalRepo


class HostRouter:
    """``CodeHost`` over ``default`` (GitHub: ``owner/name``, one slash) and hosts whose
    keys begin with their instance's name (GitLab: ``gitlab.com/group/project``, two
    slashes or more), so no key can name a repository on two hosts."""

    def __init__(self, default: CodeHost, by_instance: Mapping[str, CodeHost]) -> None:
        self.default = default
        self.by_instance = dict(by_instance)

    def host_of(self, repo: str) -> CodeHost:
        if repo.count("/") >= 2:
            for instance, host in self.by_instance.items():
                if repo.startswith(instance + "/"):
                    return host
        return self.default

    def repository(self, installation_id: int, repo: str) -> RepoHost:
        return self.host_of(repo).repository(installation_id, repo)

    def permalinks(self, repo: str, commit: str) -> Callable[[str, int, int], str]:
        return self.host_of(repo).permalinks(repo, commit)

    def pull_url(self, repo: str, number: int) -> str:
        return self.host_of(repo).pull_url(repo, number)

    def fetch_history(
        self,
        installation_id: int,
        repo: str,
        branch: str,
        into: Path,
        days: float,
        back_to: datetime | None,
    ) -> tuple[LocalRepo, str]:
        host = self.host_of(repo)
        return host.fetch_history(installation_id, repo, branch, into, days, back_to)


class WrappedHost:
    """``CodeHost`` over ``host`` whose repositories pass through ``wrap`` (a reader in
    front of them, a recorder of their writes); the rest is ``host``'s."""

    def __init__(self, host: CodeHost, wrap: Callable[[RepoHost], RepoHost]) -> None:
        self.host = host
        self.wrap = wrap

    def repository(self, installation_id: int, repo: str) -> RepoHost:
        return self.wrap(self.host.repository(installation_id, repo))

    def permalinks(self, repo: str, commit: str) -> Callable[[str, int, int], str]:
        return self.host.permalinks(repo, commit)

    def pull_url(self, repo: str, number: int) -> str:
        return self.host.pull_url(repo, number)

    def fetch_history(
        self,
        installation_id: int,
        repo: str,
        branch: str,
        into: Path,
        days: float,
        back_to: datetime | None,
    ) -> tuple[LocalRepo, str]:
        return self.host.fetch_history(installation_id, repo, branch, into, days, back_to)

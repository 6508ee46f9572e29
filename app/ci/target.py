"""Which pull request (or merge request) a URL names, on which host. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from app.errors import ConfigError
from app.github.urls import web_url
from app.gitlab.records import repo_key

GITHUB_PULL = re.compile(r"/(?P<repo>[^/]+/[^/]+)/pull/(?P<number>\d+)(/.*)?")
GITLAB_MERGE_REQUEST = re.compile(r"/(?P<path>.+?)/-/merge_requests/(?P<number>\d+)(/.*)?")
EXPECTED = (
    "give a pull request's URL (https://github.com/OWNER/REPO/pull/N, or GitHub Enterprise's)"
    " or a merge request's (https://gitlab.example.com/GROUP/PROJECT/-/merge_requests/N)"
)


class HostKind(StrEnum):
    GITHUB = "github"
    GITLAB = "gitlab"


@dataclass(frozen=True)
class PullTarget:
    """One pull request: its host, the host's API (GitHub) or instance (GitLab) address,
    the repository as the index keys it, its path on the host, and its number."""

    kind: HostKind
    host_url: str
    repo: str
    path: str
    number: int


def parse_pull_url(url: str, github_api_url: str, gitlab_url: str) -> PullTarget:
    """The pull request ``url`` names. ``github_api_url`` and ``gitlab_url`` are the
    configured hosts: a URL on one of them uses its address as configured (an instance
    under a path, a test's server); any other host is github.com's or GitLab's shape,
    told apart by the URL's path. ``ConfigError`` for anything else."""
    parts = urlsplit(url.strip())
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise ConfigError(f"not a pull request URL: {url!r}; {EXPECTED}")
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    gitlab_base = gitlab_url.rstrip("/")
    if f"{origin}{path}".startswith(gitlab_base + "/"):
        path_on_host = f"{origin}{path}"[len(gitlab_base) :]
        found = GITLAB_MERGE_REQUEST.fullmatch(path_on_host)
        if found:
            return _gitlab(gitlab_base, found)
    found = GITLAB_MERGE_REQUEST.fullmatch(path)
    if found:
        return _gitlab(origin, found)
    found = GITHUB_PULL.fullmatch(path)
    if found:
        api = github_api_url if web_url(github_api_url) == origin else _github_api(origin)
        repo = found["repo"]
        return PullTarget(HostKind.GITHUB, api, repo, repo, int(found["number"]))
    raise ConfigError(f"not a pull request URL: {url!r}; {EXPECTED}")


def _gitlab(instance: str, found: re.Match[str]) -> PullTarget:
    path = found["path"]
    number = int(found["number"])
    return PullTarget(HostKind.GITLAB, instance, repo_key(instance, path), path, number)


def _github_api(origin: str) -> str:
    """github.com's API, or GitHub Enterprise Server's (``/api/v3`` on its own host)."""
    return "https://api.github.com" if origin == "https://github.com" else f"{origin}/api/v3"

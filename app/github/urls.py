"""Addresses on GitHub's web side, from its API's address."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote


def web_url(api_url: str) -> str:
    """The web address of a GitHub API's host: api.github.com -> github.com; GitHub
    Enterprise's ``https://host/api/v3`` -> ``https://host``."""
    url = api_url.rstrip("/")
    if url == "https://api.github.com":
        return "https://github.com"
    return url.removesuffix("/api/v3")


def permalinks(api_url: str, repo: str, commit: str) -> Callable[[str, int, int], str]:
    """``link(path, start, end)``: lines of a file at ``commit`` on GitHub's web UI."""
    base = f"{web_url(api_url)}/{repo}/blob/{commit}/"
    return lambda path, start, end: f"{base}{quote(path)}#L{start}-L{end}"

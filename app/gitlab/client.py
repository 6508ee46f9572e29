"""GitLab's REST API v4 over httpx, with an access token (``PRIVATE-TOKEN``).

Every call has a timeout. Reads are retried on 429 and 5xx (waiting out ``Retry-After``,
capped); writes are not: a POST that failed may still have been applied, so the job
that made it decides (posting a review reconciles first). Errors name the method and
path, never the token.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any

import httpx
from pydantic import SecretStr

from app.errors import ConfigError
from app.forge.protocol import ForgeError

TIMEOUT = httpx.Timeout(30.0, connect=10.0)
SAFE_METHODS = frozenset({"GET", "HEAD"})
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
PER_PAGE = 100
MAX_PAGES = 50


class GitLabError(ForgeError):
    """GitLab refused or failed a request."""


class GitLabClient:
    """One instance of GitLab, as the token's user sees it. Thread-safe (one httpx
    client shared by the worker's threads). Connections are not kept alive between
    requests, as for GitHub: no idle socket outlives a request, so a client dropped with
    its job leaves nothing open."""

    def __init__(
        self,
        url: str,
        token: SecretStr | None,
        *,
        retries: int = 3,
        max_wait: float = 10.0,
        transport: httpx.BaseTransport | None = None,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        if token is None:
            raise ConfigError("GITLAB_TOKEN must be set to reach GitLab")
        self.url = url.rstrip("/")
        self.token = token
        self.retries = retries
        self.max_wait = max_wait
        self._http = httpx.Client(
            base_url=f"{self.url}/api/v4",
            headers={"PRIVATE-TOKEN": token.get_secret_value()},
            timeout=TIMEOUT,
            transport=transport,
            verify=verify,
            limits=httpx.Limits(max_keepalive_connections=0),
        )

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request (reads retried); a failure becomes ``GitLabError``."""
        attempt = 0
        while True:
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.HTTPError as exc:
                if method in SAFE_METHODS and attempt < self.retries:
                    attempt += 1
                    time.sleep(min(2**attempt * 0.25, self.max_wait))
                    continue
                raise GitLabError(f"GitLab {method} {path} failed: {_reason(exc)}") from None
            status = response.status_code
            if status < 400:
                return response
            if method in SAFE_METHODS and status in RETRY_STATUSES and attempt < self.retries:
                attempt += 1
                time.sleep(self._wait(response, attempt))
                continue
            raise GitLabError(f"GitLab {method} {path} failed with HTTP {status}", status)

    def _wait(self, response: httpx.Response, attempt: int) -> float:
        after = response.headers.get("retry-after", "")
        wait = float(after) if after.isdigit() else 2**attempt * 0.25
        return min(wait, self.max_wait)

    def paginate(self, path: str, **params: Any) -> list[dict[str, Any]]:
        """All pages of a list (``X-Next-Page``, or a short page, ends it)."""
        items: list[dict[str, Any]] = []
        for page in range(1, MAX_PAGES + 1):
            response = self.call("GET", path, params={**params, "per_page": PER_PAGE, "page": page})
            batch = response.json()
            items.extend(batch)
            next_page = response.headers.get("x-next-page")
            if len(batch) < PER_PAGE or next_page == "":
                break
        return items

    @contextmanager
    def stream(self, path: str, **params: Any) -> Iterator[httpx.Response]:
        """A streamed GET (an archive), closed on leaving."""
        request = self._http.build_request("GET", path, params=params)
        try:
            response = self._http.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise GitLabError(f"GitLab GET {path} failed: {type(exc).__name__}") from None
        try:
            if response.status_code >= 400:
                status = response.status_code
                raise GitLabError(f"GitLab GET {path} failed with HTTP {status}", status)
            yield response
        finally:
            response.close()

    @cached_property
    def username(self) -> str:
        """The token's user: its notes are the bot's own."""
        return str(self.call("GET", "/user").json().get("username") or "")


def _reason(exc: httpx.HTTPError) -> str:
    """Why a request failed, in words; an untrusted certificate names the fix."""
    if "CERTIFICATE_VERIFY_FAILED" in str(exc):
        return (
            "the server's TLS certificate is not trusted (a private CA: set"
            " REVIEWBOT_CA_BUNDLE to its PEM file)"
        )
    return type(exc).__name__

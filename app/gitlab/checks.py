"""``reviewbot doctor``'s checks of GitLab: the token works, has the scope that may write
to merge requests, the instance is new enough, and the webhook secret is set."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

from pydantic import SecretStr

from app.checks import Check
from app.config import Settings
from app.errors import ConfigError
from app.gitlab.client import GitLabClient, GitLabError
from app.tls import ssl_context

#: The token scope reviewbot needs: reading repositories and writing MR notes, statuses.
SCOPE = "api"
#: The oldest GitLab reviewbot supports: merge requests' ``/diffs`` API came in 15.7.
MIN_VERSION = (15, 7)


def gitlab_wanted(settings: Settings) -> bool:
    """GitLab is checked when any of its settings is given."""
    return bool(settings.gitlab_token or settings.gitlab_tokens or settings.gitlab_webhook_secret)


def gitlab_checks(settings: Settings) -> list[Callable[[], Check]]:
    """The checks ``run_checks`` runs for GitLab, in order: each token, then webhooks."""
    tokens: list[tuple[str, SecretStr | None]] = [
        (f"GitLab ({path})", token) for path, token in settings.gitlab_tokens.items()
    ]
    if settings.gitlab_token is not None or not tokens:
        tokens.insert(0, ("GitLab", settings.gitlab_token))
    checks: list[Callable[[], Check]] = [
        partial(gitlab_token, settings, token, name) for name, token in tokens
    ]
    return [*checks, lambda: gitlab_webhooks(settings)]


def gitlab_token(settings: Settings, token: SecretStr | None, name: str = "GitLab") -> Check:
    if token is None:
        return Check(
            name,
            False,
            "GITLAB_TOKEN is not set",
            f"make a project, group or personal access token with the {SCOPE} scope",
        )
    try:
        verify = ssl_context(settings)
    except ConfigError as exc:
        return Check(name, False, str(exc), "point REVIEWBOT_CA_BUNDLE at the CA's PEM file")
    client = GitLabClient(settings.gitlab_url, token, retries=0, verify=verify)
    try:
        user = client.call("GET", "/user").json()
        version = str(client.call("GET", "/version").json().get("version", "?"))
        scopes = token_scopes(client)
    except GitLabError as exc:
        fix = (
            f"the token is wrong, expired or lacks the {SCOPE} scope"
            if exc.status in (401, 403)
            else "check GITLAB_URL and the network"
        )
        return Check(name, False, str(exc), fix)
    detail = f"{settings.gitlab_url} (GitLab {version}) as @{user.get('username')}"
    if scopes is not None and SCOPE not in scopes:
        listed = ", ".join(scopes) or "none"
        return Check(
            name,
            False,
            f"{detail}: the token's scopes are {listed}, so it cannot write notes or statuses",
            f"make a token with the {SCOPE} scope",
        )
    if version_tuple(version) < MIN_VERSION:
        least = ".".join(map(str, MIN_VERSION))
        return Check(
            name,
            False,
            f"{detail}: older than GitLab {least}, the least reviewbot supports"
            " (merge requests' /diffs API)",
            f"upgrade GitLab to {least} or newer",
        )
    return Check(name, True, detail)


def token_scopes(client: GitLabClient) -> list[str] | None:
    """The token's scopes (``/personal_access_tokens/self``, which answers for personal,
    project and group tokens); None where the instance cannot say (older than 15.5)."""
    try:
        data = client.call("GET", "/personal_access_tokens/self").json()
    except GitLabError as exc:
        if exc.status == 404:
            return None
        raise
    return [str(scope) for scope in data.get("scopes") or []]


def version_tuple(version: str) -> tuple[int, int]:
    """``17.6.0-ee`` -> (17, 6); an unreadable version reads as new enough."""
    found = re.match(r"(\d+)\.(\d+)", version)
    return (int(found[1]), int(found[2])) if found else (999, 0)


def gitlab_webhooks(settings: Settings) -> Check:
    if settings.gitlab_webhook_secret is None:
        return Check(
            "GitLab webhooks",
            False,
            "GITLAB_WEBHOOK_SECRET is not set",
            "set it to the webhook's secret token (Settings > Webhooks)",
        )
    return Check("GitLab webhooks", True, "secret token set; POST /webhooks/gitlab")
